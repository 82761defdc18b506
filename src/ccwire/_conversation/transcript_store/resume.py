"""Store-backed resume: a session loaded from a `SessionStore` into a temporary config dir.

The CLI resumes only from a local transcript file. When the transcript lives in a
store, `materialize_resume_session` loads it (and its subagent transcripts), writes it
to a temporary directory laid out like `~/.claude`
(`projects/<project_key>/<session_id>.jsonl`), copies the caller's CLI
configuration and credentials into it, and returns it. The CLI then runs with
`CLAUDE_CONFIG_DIR` pointing there and `--resume <session_id>`; `cleanup()` removes
the directory afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..._core.errors import SessionStoreError
from ..cli_paths import project_key_for_directory, valid_uuid
from .protocol import SessionKey, SessionStore, store_implements

__all__ = ["MaterializedResume", "materialize_resume_session"]

_T = TypeVar("_T")
_STRIPPED_SETTINGS = ("enabledPlugins", "extraKnownMarketplaces")


@dataclass(frozen=True)
class MaterializedResume:
    """A session written out of a store, ready for the CLI to resume.

    Attributes:
        config_dir: The temporary directory to pass as `CLAUDE_CONFIG_DIR`.
        resume_session_id: The session id to pass as `--resume`.
    """

    config_dir: Path
    resume_session_id: str

    async def cleanup(self) -> None:
        """Remove `config_dir` (best effort, never raises)."""
        await anyio.to_thread.run_sync(lambda: shutil.rmtree(self.config_dir, ignore_errors=True))

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """`base` with `CLAUDE_CONFIG_DIR` pointing at `config_dir`.

        Args:
            base: The environment the CLI would get otherwise.

        Returns:
            A new dict.
        """
        return {**(base or {}), "CLAUDE_CONFIG_DIR": str(self.config_dir)}


async def _bounded(call: Awaitable[_T], timeout: float, what: str) -> _T:
    try:
        with anyio.fail_after(timeout):
            return await call
    except TimeoutError as exc:
        raise SessionStoreError(f"{what} took longer than {timeout:g} s while resuming") from exc
    except SessionStoreError:
        raise
    except Exception as exc:  # the adapter is user code
        raise SessionStoreError(f"{what} failed while resuming: {exc!r}") from exc


async def _load(store: SessionStore, key: SessionKey, timeout: float) -> list[Any] | None:
    what = f"SessionStore.load({key})"
    entries = await _bounded(store.load(key), timeout, what)
    return list(entries) if entries else None


async def _continue_candidate(
    store: SessionStore, project_key: str, timeout: float
) -> tuple[str, list[Any]] | None:
    listed = await _bounded(store.list_sessions(project_key), timeout, "list_sessions()")
    for candidate in sorted(listed, key=lambda s: s["mtime"], reverse=True):
        sid = candidate["session_id"]
        if not valid_uuid(sid):
            continue
        entries = await _load(store, {"project_key": project_key, "session_id": sid}, timeout)
        if not entries:
            continue
        first = entries[0]
        if isinstance(first, dict) and first.get("isSidechain") is True:
            continue  # a subagent's transcript: --continue resumes the user's conversation
        return sid, entries
    return None


def _write_jsonl(path: Path, entries: list[Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for entry in entries:
            out.write(json.dumps(entry, separators=(",", ":")))
            out.write("\n")
    with suppress(OSError):
        path.chmod(0o600)


def _safe_subpath(subpath: str, session_dir: Path) -> bool:
    if not subpath or "\x00" in subpath or subpath.startswith(("/", "\\")):
        return False
    parts = re.split(r"[\\/]", subpath)
    if any(p in ("", ".", "..") for p in parts) or re.match(r"^[A-Za-z]:", subpath):
        return False
    target = (session_dir / f"{subpath}.jsonl").resolve()
    return target.is_relative_to(session_dir.resolve())


def _copy_config(target: Path, env: Mapping[str, str]) -> None:
    """The caller's CLI credentials and settings, so the resumed CLI runs as usual."""
    configured = env.get("CLAUDE_CONFIG_DIR") or os.environ.get("CLAUDE_CONFIG_DIR")
    home = Path(env.get("HOME") or os.environ.get("HOME") or Path.home())
    source = Path(configured) if configured else home / ".claude"
    credentials = source / ".credentials.json"
    if credentials.is_file():
        text = credentials.read_text(encoding="utf-8", errors="replace")
        with suppress(ValueError, TypeError, AttributeError):
            data = json.loads(text)
            # a refresh in the temporary directory would spend the caller's single-use
            # refresh token and keep the new one where nobody reads it
            data["claudeAiOauth"].pop("refreshToken", None)
            text = json.dumps(data)
        (target / ".credentials.json").write_text(text, encoding="utf-8")
        with suppress(OSError):
            (target / ".credentials.json").chmod(0o600)
    claude_json = (Path(configured) if configured else home) / ".claude.json"
    if claude_json.is_file():
        shutil.copyfile(claude_json, target / ".claude.json")
    for name in ("settings.json", "cowork_settings.json"):
        settings = source / name
        if not settings.is_file():
            continue
        raw = settings.read_bytes()
        with suppress(ValueError, UnicodeDecodeError, AttributeError):
            data = json.loads(raw.decode("utf-8-sig"))
            for key in _STRIPPED_SETTINGS:
                data.pop(key, None)
            if isinstance(data.get("env"), dict):
                data["env"].pop("CLAUDE_CONFIG_DIR", None)
            raw = json.dumps(data).encode()
        (target / name).write_bytes(raw)


async def materialize_resume_session(
    store: SessionStore,
    *,
    cwd: str | os.PathLike[str] | None = None,
    resume: str | None = None,
    continue_conversation: bool = False,
    env: Mapping[str, str] | None = None,
    load_timeout: float = 60.0,
) -> MaterializedResume | None:
    """Load a session from `store` and write it where the CLI can resume it.

    Args:
        store: The transcript store.
        cwd: The session's working directory (its `project_key`); default the
            current directory.
        resume: The session id to resume.
        continue_conversation: Without `resume`: the most recently written session of
            the project that is not a subagent's (needs `list_sessions`).
        env: The CLI's environment, where its configuration directory is found.
        load_timeout: Seconds each store call may take.

    Returns:
        The temporary directory and the session id, or `None` when there is nothing
        to resume from the store (no `resume` nor `continue_conversation`, an id that
        is not a UUID, or a session the store does not have).

    Raises:
        SessionStoreError: A store call failed or took longer than `load_timeout`.
        ValueError: `continue_conversation` with a store without `list_sessions`.
    """
    if resume is None and not continue_conversation:
        return None
    project_key = project_key_for_directory(cwd)
    if resume is not None:
        if not valid_uuid(resume):
            return None
        entries = await _load(
            store, {"project_key": project_key, "session_id": resume}, load_timeout
        )
        found = (resume, entries) if entries else None
    else:
        if not store_implements(store, "list_sessions"):
            raise ValueError("continue_conversation with a session store needs list_sessions()")
        found = await _continue_candidate(store, project_key, load_timeout)
    if found is None:
        return None
    session_id, entries = found
    base = Path(tempfile.mkdtemp(prefix="ccwire-resume-"))
    try:
        project_dir = base / "projects" / project_key
        await anyio.to_thread.run_sync(_write_jsonl, project_dir / f"{session_id}.jsonl", entries)
        await anyio.to_thread.run_sync(_copy_config, base, dict(env or {}))
        if store_implements(store, "list_subkeys"):
            await _subkeys(store, project_dir, project_key, session_id, load_timeout)
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    return MaterializedResume(config_dir=base, resume_session_id=session_id)


async def _subkeys(
    store: SessionStore, project_dir: Path, project_key: str, session_id: str, timeout: float
) -> None:
    session_dir = project_dir / session_id
    key = {"project_key": project_key, "session_id": session_id}
    subpaths = await _bounded(store.list_subkeys(key), timeout, "list_subkeys()")  # type: ignore[arg-type]
    for subpath in subpaths:
        if not _safe_subpath(subpath, session_dir):
            continue  # a store's subpath never leaves the session's directory
        loaded = await _load(store, {**key, "subpath": subpath}, timeout)  # type: ignore[typeddict-item]
        if not loaded:
            continue
        metadata = [e for e in loaded if isinstance(e, dict) and e.get("type") == "agent_metadata"]
        lines = [
            e for e in loaded if not (isinstance(e, dict) and e.get("type") == "agent_metadata")
        ]
        path = session_dir / f"{subpath}.jsonl"
        await anyio.to_thread.run_sync(_write_jsonl, path, lines)
        if metadata:
            meta = {k: v for k, v in metadata[-1].items() if k != "type"}
            sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
            await anyio.to_thread.run_sync(sidecar.write_text, json.dumps(meta))
