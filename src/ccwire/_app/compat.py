"""`ccwire compat install | uninstall | status`: the drop-in for code that imports
``claude_agent_sdk`` and cannot be edited (tracing integrations, frameworks, tests).

`install_dropin()` writes into the active environment's site-packages (the ``purelib``
directory of the Python that runs ``ccwire``):

* a ``claude_agent_sdk`` package whose modules (``types``, ``query``, ``client``,
  ``_errors``, ``_version``, ``_cli_version``, ``_internal.client``,
  ``_internal.transport``, ``_internal.transport.subprocess_cli``,
  ``_internal.message_parser``, ``_internal.query``, ``_internal.sessions``, ``testing``,
  ``testing.session_store_conformance``)
  serve ccwire's objects, each imported on first use:
  ``claude_agent_sdk.ClaudeSDKClient is ccwire.ClaudeSDKClient``, so a method an
  integration patches on the class is patched for everyone;
* a ``claude_agent_sdk-0.2.187.dist-info`` directory, so that ``importlib.metadata``
  (and pip) see the distribution ``claude-agent-sdk`` at the version ccwire matches.
  Its ``INSTALLER`` says ``ccwire`` and its ``RECORD`` lists every file written.

`uninstall_dropin()` removes exactly the files of that ``RECORD`` (and the bytecode
Python cached for them, and the directories left empty); `dropin_status()` says what
is there. Nothing is written where the real ``claude-agent-sdk`` is installed (a
distribution another installer wrote, or a ``claude_agent_sdk`` importable from
elsewhere): that is refused with the reason.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import sysconfig
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .._transport.discovery import PINNED_CLI_VERSION
from .._version import __version__
from .errors import DropInError
from .io import CliIO, ExitCode
from .reference_names import REFERENCE_NAMES, REFERENCE_VERSION

__all__ = [
    "DIST_NAME",
    "DropInError",
    "DropInStatus",
    "compat_command",
    "dropin_status",
    "install_dropin",
    "site_packages",
    "uninstall_dropin",
]

DIST_NAME = "claude-agent-sdk"
"""The distribution the drop-in stands in for."""

PACKAGE = "claude_agent_sdk"
INSTALLER = "ccwire"
"""What the drop-in's ``INSTALLER`` file says: how ccwire knows its own install."""

_DIST_INFO = f"{PACKAGE}-{REFERENCE_VERSION}.dist-info"
_MARKER = "ccwire.json"
"""A file of the dist-info: which ccwire wrote the drop-in."""


@dataclass(frozen=True)
class DropInStatus:
    """What `dropin_status()` found in one site-packages directory.

    Attributes:
        site_packages: The directory looked at.
        installed: The drop-in is there.
        ccwire_version: The ccwire that wrote it (``""`` when not installed).
        files: The files its ``RECORD`` lists, relative to ``site_packages``.
        real_sdk: How each real ``claude-agent-sdk`` found on ``sys.path`` shows (empty:
            none; the drop-in can be installed).
    """

    site_packages: Path
    installed: bool = False
    ccwire_version: str = ""
    files: tuple[str, ...] = ()
    real_sdk: tuple[str, ...] = field(default=())

    @property
    def stale(self) -> bool:
        """Installed by another version of ccwire (install again to refresh it)."""
        return self.installed and self.ccwire_version != __version__

    def to_dict(self) -> dict[str, object]:
        """The status as JSON-ready data (`ccwire compat status --json`)."""
        state = "real-sdk" if self.real_sdk else "installed" if self.installed else "absent"
        return {
            "state": state,
            "site_packages": str(self.site_packages),
            "version": REFERENCE_VERSION if self.installed else None,
            "ccwire_version": self.ccwire_version or None,
            "stale": self.stale,
            "files": list(self.files),
            "real_sdk": list(self.real_sdk),
        }


def site_packages() -> Path:
    """The active environment's site-packages: ``purelib`` of the running Python.

    Returns:
        The directory.
    """
    return Path(sysconfig.get_paths()["purelib"])


# ------------------------------------------------------------------------ finding


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _real_sdk(site: Path) -> list[str]:
    """The real ``claude-agent-sdk`` this Python can see: its distributions not
    written by ccwire, and a ``claude_agent_sdk`` importable from elsewhere."""
    importlib.invalidate_caches()
    found: list[str] = []
    for dist in importlib.metadata.distributions():
        if _canonical(dist.name or "") != DIST_NAME:
            continue
        if (dist.read_text("INSTALLER") or "").strip() == INSTALLER:
            continue
        found.append(f"claude-agent-sdk {dist.version} in {dist.locate_file('')}")
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):  # a broken or half-removed package: not ours
        spec = None
    ours = (site / PACKAGE / "__init__.py").resolve()
    origin = spec.origin if spec is not None else None
    if not found and origin is not None and Path(origin).resolve() != ours:
        found.append(f"a {PACKAGE} package at {Path(origin).parent}")
    if not found and spec is None and (site / PACKAGE).exists() and _own_dist_info(site) is None:
        found.append(f"a {PACKAGE} directory ccwire did not write, in {site}")
    return found


def _own_dist_info(site: Path) -> Path | None:
    for candidate in sorted(site.glob(f"{PACKAGE}-*.dist-info")):
        installer = candidate / "INSTALLER"
        if installer.is_file() and installer.read_text("utf-8").strip() == INSTALLER:
            return candidate
    return None


def _recorded(site: Path, dist_info: Path) -> list[str]:
    """The paths the ``RECORD`` of ``dist_info`` lists, checked to lie inside ``site``
    (under the package or the dist-info directory)."""
    record = dist_info / "RECORD"
    if not record.is_file():
        raise DropInError(f"{dist_info} has no RECORD: remove it and {site / PACKAGE} by hand")
    allowed = (f"{PACKAGE}/", f"{dist_info.name}/")
    paths: list[str] = []
    for line in record.read_text("utf-8").splitlines():
        rel = line.rsplit(",", 2)[0] if line.count(",") >= 2 else line
        if not rel:
            continue
        if not rel.startswith(allowed) or ".." in Path(rel).parts or Path(rel).is_absolute():
            raise DropInError(f"{record} lists {rel!r}, outside the drop-in: nothing removed")
        paths.append(rel)
    return paths


def dropin_status(site: Path | None = None) -> DropInStatus:
    """What is installed in ``site`` (default: `site_packages()`).

    Args:
        site: The site-packages directory to look at.

    Returns:
        The drop-in's status there, and any real ``claude-agent-sdk`` in sight.
    """
    site = site_packages() if site is None else site
    real = tuple(_real_sdk(site))
    dist_info = _own_dist_info(site)
    if dist_info is None:
        return DropInStatus(site, real_sdk=real)
    try:
        marker = json.loads((dist_info / _MARKER).read_text("utf-8"))
        version = str(marker.get("ccwire_version", "?"))
    except (OSError, ValueError, AttributeError):
        version = "?"
    return DropInStatus(site, True, version, tuple(_recorded(site, dist_info)), real)


# --------------------------------------------------------------------- installing


def install_dropin(site: Path | None = None) -> DropInStatus:
    """Write the drop-in into ``site`` (default: `site_packages()`), replacing one an
    earlier ccwire wrote.

    Args:
        site: The site-packages directory.

    Returns:
        The status after the install.

    Raises:
        DropInError: The real ``claude-agent-sdk`` is installed or importable, or the
            directory cannot be written (nothing is left half-written).
    """
    site = site_packages() if site is None else site
    before = dropin_status(site)
    if before.real_sdk:
        raise DropInError(
            "the real claude-agent-sdk is installed here ("
            + "; ".join(before.real_sdk)
            + "): the drop-in would hide it, so nothing was written",
            hint="keep using it, or `pip uninstall claude-agent-sdk` and run "
            "`ccwire compat install` again to have ccwire answer its imports",
        )
    if before.installed:
        uninstall_dropin(site)
    files = _files()
    written: list[Path] = []
    try:
        for rel, data in files.items():
            path = site / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            written.append(path)
        record = site / _DIST_INFO / "RECORD"
        record.write_text(_record(files), encoding="utf-8")
        written.append(record)
    except OSError as exc:
        _remove([str(p.relative_to(site)) for p in written], site)
        raise DropInError(
            f"cannot write the drop-in into {site}: {exc}",
            hint="run it as the owner of that environment (or in a virtual environment)",
        ) from exc
    importlib.invalidate_caches()
    return dropin_status(site)


def uninstall_dropin(site: Path | None = None) -> list[str]:
    """Remove the drop-in from ``site`` (default: `site_packages()`): every file its
    ``RECORD`` lists, the bytecode cached for them, and the directories left empty.

    Args:
        site: The site-packages directory.

    Returns:
        The files removed (relative to ``site``); empty when none was installed.

    Raises:
        DropInError: The ``claude-agent-sdk`` there was not installed by ccwire.
    """
    site = site_packages() if site is None else site
    dist_info = _own_dist_info(site)
    if dist_info is None:
        real = _real_sdk(site)
        if real:
            raise DropInError(
                "the claude-agent-sdk here was not installed by ccwire ("
                + "; ".join(real)
                + "): nothing removed",
                hint="remove the real package with `pip uninstall claude-agent-sdk`",
            )
        return []
    paths = _recorded(site, dist_info)
    _remove(paths, site)
    importlib.invalidate_caches()
    return paths


def _remove(paths: Iterable[str], site: Path) -> None:
    """Delete ``paths`` (relative to ``site``), the bytecode cached for the modules
    among them, then every directory of theirs left empty (deepest first)."""
    directories: set[Path] = set()
    for rel in paths:
        path = site / rel
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        if path.suffix == ".py":
            cache = path.parent / "__pycache__"
            for compiled in cache.glob(f"{path.stem}.*.pyc"):
                with contextlib.suppress(FileNotFoundError):
                    compiled.unlink()
            directories.add(cache)
        parent = path.parent
        while parent != site and site in parent.parents:
            directories.add(parent)
            parent = parent.parent
    for directory in sorted(directories, key=lambda d: len(d.parts), reverse=True):
        with contextlib.suppress(FileNotFoundError, OSError):  # OSError: not empty
            directory.rmdir()


def _record(files: dict[str, bytes]) -> str:
    lines = []
    for rel, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
        lines.append(f"{rel},sha256={digest.decode('ascii')},{len(data)}")
    lines.append(f"{_DIST_INFO}/RECORD,,")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- what is written


_ERRORS = (
    "CLIConnectionError", "CLIJSONDecodeError", "CLINotFoundError", "ClaudeSDKError",
    "ProcessError", "ResultError",
)  # fmt: skip

_REFERENCE_LINE_CAP = 1024 * 1024
"""The reference's default cap on one stdout line (``_DEFAULT_MAX_BUFFER_SIZE``), which
code reads to check its own ``max_buffer_size`` is above it; ccwire's default has none."""

_EAGER = ("ClaudeSDKClient", "Transport", "__version__", "query")
"""Names the package binds when it is imported, as the reference's does (``query`` is
the function, not the submodule of that name)."""


def _files() -> dict[str, bytes]:
    """Every file of the drop-in but ``RECORD``: ``{path relative to site-packages:
    content}``."""
    import ccwire.types

    lazy = [n for n in REFERENCE_NAMES if n not in _EAGER]
    modules = {
        "__init__.py": _module(
            PACKAGE,
            head=(
                "from . import _errors, types",
                "from ._internal.transport import Transport",
                "from ._version import __version__",
                "from .client import ClaudeSDKClient",
                "from .query import query",
            ),
            exports=REFERENCE_NAMES,
            sources=(("ccwire", lazy),),
        ),
        "_version.py": _module(
            f"{PACKAGE}._version", head=(f"__version__ = {REFERENCE_VERSION!r}",)
        ),
        "_cli_version.py": _module(
            f"{PACKAGE}._cli_version", head=(f"__cli_version__ = {PINNED_CLI_VERSION!r}",)
        ),
        "types.py": _module(f"{PACKAGE}.types", sources=(("ccwire.types", ccwire.types.__all__),)),
        "query.py": _module(f"{PACKAGE}.query", sources=(("ccwire", ["query"]),)),
        "client.py": _module(f"{PACKAGE}.client", sources=(("ccwire", ["ClaudeSDKClient"]),)),
        "_errors.py": _module(
            f"{PACKAGE}._errors",
            sources=(("ccwire", _ERRORS), ("ccwire._core.errors", ["MessageParseError"])),
        ),
        "_internal/__init__.py": _module(f"{PACKAGE}._internal"),
        "_internal/transport/__init__.py": _module(
            f"{PACKAGE}._internal.transport", sources=(("ccwire", ["Transport"]),)
        ),
        "_internal/transport/subprocess_cli.py": _module(
            f"{PACKAGE}._internal.transport.subprocess_cli",
            head=(f"_DEFAULT_MAX_BUFFER_SIZE = {_REFERENCE_LINE_CAP}",),
            sources=(("ccwire._conversation.subprocess_cli", ["SubprocessCLITransport"]),),
        ),
        "_internal/client.py": _module(  # and the names the reference's module imports
            f"{PACKAGE}._internal.client",
            sources=(
                ("ccwire._conversation.query", ["InternalClient"]),
                ("ccwire._conversation.subprocess_cli", ["SubprocessCLITransport"]),
                ("ccwire._wire.message_parser", ["parse_message"]),
                ("ccwire", ["Transport"]),
            ),
        ),
        "_internal/query.py": _module(  # what `ClaudeSDKClient._query` is while connected
            f"{PACKAGE}._internal.query",
            sources=(("ccwire._conversation.reference_query", ["Query"]),),
        ),
        "_internal/sessions.py": _module(  # its helpers that find the CLI's transcripts
            f"{PACKAGE}._internal.sessions",
            sources=(
                (
                    "ccwire",
                    [
                        "SDKSessionInfo",
                        "SessionKey",
                        "SessionMessage",
                        "SessionStore",
                        "get_session_info",
                        "get_session_messages",
                        "get_subagent_messages",
                        "list_sessions",
                        "list_subagents",
                        "project_key_for_directory",
                    ],
                ),
                ("ccwire._conversation.cli_paths", ["MAX_SANITIZED_LENGTH"]),
                (  # the bound on a store listing's concurrent loads
                    "ccwire._sessions.stores.reading",
                    [("_STORE_LIST_LOAD_CONCURRENCY", "LOAD_CONCURRENCY")],
                ),
                (
                    "ccwire._sessions.transcripts.paths",
                    [
                        ("_canonicalize_path", "canonicalize_path"),
                        ("_find_project_dir", "find_project_dir"),
                        ("_get_claude_config_home_dir", "config_home"),
                        ("_get_project_dir", "project_dir"),
                        ("_get_projects_dir", "projects_dir"),
                        ("_sanitize_path", "sanitize_path"),
                    ],
                ),
            ),
        ),
        "_internal/session_store.py": _module(  # its store helpers, InMemorySessionStore
            f"{PACKAGE}._internal.session_store",
            sources=(
                (
                    "ccwire",
                    [
                        "InMemorySessionStore",
                        "SessionKey",
                        "SessionListSubkeysKey",
                        "SessionStore",
                        "SessionStoreEntry",
                        "SessionStoreListEntry",
                        "SessionSummaryEntry",
                        "fold_session_summary",
                        "project_key_for_directory",
                    ],
                ),
                (
                    "ccwire._conversation.transcript_store.mirror",
                    ["file_path_to_session_key"],
                ),
            ),
        ),
        "_internal/message_parser.py": _module(
            f"{PACKAGE}._internal.message_parser",
            sources=(("ccwire._wire.message_parser", ["MessageParseError", "parse_message"]),),
        ),
        "testing/__init__.py": _module(
            f"{PACKAGE}.testing", sources=(("ccwire.testing", ["run_session_store_conformance"]),)
        ),
        "testing/session_store_conformance.py": _module(
            f"{PACKAGE}.testing.session_store_conformance",
            sources=(("ccwire.testing", ["run_session_store_conformance"]),),
        ),
    }
    files = {f"{PACKAGE}/{rel}": text.encode("utf-8") for rel, text in modules.items()}
    files[f"{PACKAGE}/py.typed"] = b""
    info = {
        "METADATA": (
            "Metadata-Version: 2.1\n"
            f"Name: {DIST_NAME}\n"
            f"Version: {REFERENCE_VERSION}\n"
            f"Summary: claude-agent-sdk's modules, answered by ccwire {__version__} "
            "(written by `ccwire compat install`)\n"
            "Requires-Python: >=3.10\n"
            "Requires-Dist: ccwire\n"
        ),
        "INSTALLER": f"{INSTALLER}\n",
        "top_level.txt": f"{PACKAGE}\n",
        _MARKER: json.dumps({"ccwire_version": __version__, "reference_version": REFERENCE_VERSION})
        + "\n",
    }
    files.update({f"{_DIST_INFO}/{name}": text.encode("utf-8") for name, text in info.items()})
    return files


def _module(
    name: str,
    *,
    head: Sequence[str] = (),
    exports: Sequence[str] | None = None,
    sources: Sequence[tuple[str, Sequence[str | tuple[str, str]]]] = (),
) -> str:
    """The text of one module of the drop-in: its ``head`` statements, then the names
    of ``sources`` (``(ccwire module, names)``), imported on first use (and by type
    checkers, as plain imports). A name given as ``(served, ccwire's)`` serves ccwire's
    object of another name under the reference's."""
    pairs = [
        (module, [(n, n) if isinstance(n, str) else n for n in group]) for module, group in sources
    ]
    lines = [
        f'"""``{name}``, answered by ccwire.',
        "",
        f"Written by ``ccwire compat install`` (ccwire {__version__}); ``ccwire compat uninstall``",
        "removes it. Each name is ccwire's own object, imported on first use.",
        '"""',
        "",
    ]
    if head:
        lines += [*head, ""]
    names = [served for _, group in pairs for served, _ in group]
    if exports is None and names:
        exports = sorted(names)
    if exports is not None:
        lines += ["__all__ = [", *(f"    {n!r}," for n in exports), "]", ""]
    if sources:
        lines += ["from typing import TYPE_CHECKING", "", "if TYPE_CHECKING:"]
        for module, group in pairs:
            lines.append(f"    from {module} import (")
            lines += [f"        {own} as {served}," for served, own in group]
            lines.append("    )")
        table = ",\n".join(
            f"        {served!r}: ({module!r}, {own!r})"
            for module, group in pairs
            for served, own in group
        )
        lines += [
            "else:",
            "    from importlib import import_module as _import_module",
            "",
            "    _SOURCES = {  # served name: (ccwire module, its name there)",
            table + ",",
            "    }",
            "",
            "    def __getattr__(name):",
            "        source = _SOURCES.get(name)",
            "        if source is None:",
            '            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")',
            "        value = getattr(_import_module(source[0]), source[1])",
            "        globals()[name] = value  # later accesses (and patches) use the module's own",
            "        return value",
            "",
            "    def __dir__():",
            "        return sorted(set(globals()) | set(_SOURCES))",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


# ------------------------------------------------------------------ the command


def compat_command(args: argparse.Namespace, io: CliIO) -> int:
    """Run `ccwire compat ACTION`.

    Args:
        args: The parsed arguments.
        io: Where to write.

    Returns:
        `ExitCode.OK`.

    Raises:
        DropInError: It was refused (the caller reports it, with its hint).
    """
    out = io.stdout
    if args.action == "install":
        status = install_dropin()
        out.write(
            f"ccwire compat: installed claude-agent-sdk {REFERENCE_VERSION} (answered by "
            f"ccwire {__version__}) in {status.site_packages}\n"
            "  `import claude_agent_sdk` now gives ccwire's objects; "
            "`ccwire compat uninstall` removes it\n"
        )
    elif args.action == "uninstall":
        site = site_packages()
        removed = uninstall_dropin(site)
        if removed:
            out.write(f"ccwire compat: removed the drop-in ({len(removed)} files) from {site}\n")
        else:
            out.write(f"ccwire compat: no drop-in in {site}: nothing to remove\n")
    else:
        _print_status(dropin_status(), io, as_json=bool(args.json))
    out.flush()
    return ExitCode.OK


def _print_status(status: DropInStatus, io: CliIO, *, as_json: bool) -> None:
    out = io.stdout
    if as_json:
        out.write(json.dumps(status.to_dict()) + "\n")
        return
    if status.real_sdk:
        state = "not installable here: the real claude-agent-sdk is (" + "; ".join(status.real_sdk)
        state += ")"
    elif status.stale:
        state = (
            f"installed by ccwire {status.ccwire_version}; this is ccwire {__version__}: "
            "run `ccwire compat install` again to refresh it"
        )
    elif status.installed:
        state = f"installed (claude-agent-sdk {REFERENCE_VERSION}, answered by ccwire "
        state += f"{__version__})"
    else:
        state = "not installed (`ccwire compat install` installs it)"
    out.write(f"claude-agent-sdk drop-in: {state}\n  site-packages: {status.site_packages}\n")
    if status.installed:
        out.write(f"  files: {len(status.files)} (listed in {_DIST_INFO}/RECORD)\n")
