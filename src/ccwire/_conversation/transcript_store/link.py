"""`StoreLink`: one connection's `session_store`, resumed from and mirrored into.

With `ClaudeAgentOptions.session_store` set, the connection:

1. before it starts the CLI, with `resume` (or `continue_conversation`), loads the
   session from the store into a temporary config directory (`prepare()`); the CLI
   then runs with `CLAUDE_CONFIG_DIR` pointing there and `--resume <id>`. A session
   the store does not have leaves the options as they are (the CLI resumes from its
   local transcript, or starts afresh);
2. starts the CLI with `--session-mirror` and feeds each `transcript_mirror` frame to a
   `TranscriptMirrorBatcher` (`feed()`); the frames are not surfaced (unless
   `session_mirror=True` asks for them too);
3. flushes the batcher before a `ResultMessage` is handed to the caller (`flush()`), so
   a caller who sees a result finds the turn in the store; a batch dropped after its
   retries becomes a `MirrorErrorMessage`, surfaced before the next message;
4. on close, after the CLI has exited, flushes what is left and removes the temporary
   directory (`aclose()`).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from ..._wire import codec
from ..._wire.messages import Message, TranscriptMirrorMessage
from ..cli_env import build_env
from ..cli_paths import cli_config_dir
from .mirror import TranscriptMirrorBatcher
from .protocol import SessionKey, SessionStore
from .resume import MaterializedResume, materialize_resume_session

if TYPE_CHECKING:
    from ..options import ClaudeAgentOptions

__all__ = ["StoreLink"]

logger = logging.getLogger("ccwire")


class StoreLink:
    """See the module docstring. Built by the connection when `session_store` is set.

    Args:
        options: The caller's options (`session_store` is not `None`).
    """

    def __init__(self, options: ClaudeAgentOptions) -> None:
        assert options.session_store is not None
        self.store: SessionStore = options.session_store
        self.options = options
        self.materialized: MaterializedResume | None = None
        self._batcher: TranscriptMirrorBatcher | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._wake: Callable[[], None] = _nothing
        self._errors: deque[Message] = deque()

    async def prepare(self, *, materialize: bool) -> ClaudeAgentOptions:
        """The options to start the CLI with.

        Args:
            materialize: Whether to load a resumed session from the store (not with a
                custom transport: the options never reach it).

        Returns:
            The caller's options, or a copy pointing at the temporary config directory
            (`env["CLAUDE_CONFIG_DIR"]`), with `resume` set to the session found and
            `continue_conversation` off.

        Raises:
            SessionStoreError: A store call failed or took longer than
                `load_timeout_ms`.
        """
        opts = self.options
        if not materialize or (opts.resume is None and not opts.continue_conversation):
            return opts
        self.materialized = await materialize_resume_session(
            self.store,
            cwd=opts.cwd,
            resume=opts.resume,
            continue_conversation=opts.continue_conversation,
            env=build_env(opts, base_env=os.environ),
            load_timeout=max(opts.load_timeout_ms, 0) / 1000,
        )
        if self.materialized is None:
            return opts
        return replace(
            opts,
            env={**opts.env, "CLAUDE_CONFIG_DIR": str(self.materialized.config_dir)},
            resume=self.materialized.resume_session_id,
            continue_conversation=False,
        )

    def start(
        self,
        launch_options: ClaudeAgentOptions,
        task_group: anyio.abc.TaskGroup,
        wake: Callable[[], None],
    ) -> None:
        """Start mirroring: frames are batched into the store from now on.

        Args:
            launch_options: The options the CLI was started with (from `prepare()`).
            task_group: Where background flushes run.
            wake: Called when a `MirrorErrorMessage` is ready, to wake a waiting reader.
        """
        if self.materialized is not None:
            projects = self.materialized.config_dir / "projects"
        else:
            projects = cli_config_dir(build_env(launch_options, base_env=os.environ)) / "projects"
        self._tg = task_group
        self._wake = wake
        self._batcher = TranscriptMirrorBatcher(
            self.store,
            str(projects),
            self._report,
            task_group=task_group,
            flush_mode=self.options.session_store_flush,
        )

    @property
    def projects_dir(self) -> Path | None:
        """The `projects` directory file paths are resolved against (once started)."""
        return Path(self._batcher.projects_dir) if self._batcher is not None else None

    def feed(self, message: TranscriptMirrorMessage) -> None:
        """Buffer one `transcript_mirror` frame for the store (never blocks)."""
        if self._batcher is not None:
            entries: list[Any] = [dict(e) for e in message.entries]
            self._batcher.enqueue(message.file_path, entries)

    async def flush(self) -> None:
        """Append everything buffered; returns once the store has it (or gave up).

        The flush runs in the connection's task group: a caller cancelled while it
        waits does not lose the batch.
        """
        batcher, tg = self._batcher, self._tg
        if batcher is None or tg is None or not (batcher.pending or batcher.busy):
            return
        done = anyio.Event()

        async def run() -> None:
            try:
                await batcher.flush()
            finally:
                done.set()

        try:
            tg.start_soon(run)
        except RuntimeError:  # the task group is closing: close() flushes
            return
        await done.wait()

    def take_errors(self) -> list[Message]:
        """The `MirrorErrorMessage`s reported since the last call, oldest first."""
        taken = list(self._errors)
        self._errors.clear()
        return taken

    @property
    def has_errors(self) -> bool:
        """Whether a `MirrorErrorMessage` waits to be surfaced."""
        return bool(self._errors)

    async def aclose(self) -> None:
        """The last flush, then the temporary config directory goes. Never raises."""
        with anyio.CancelScope(shield=True):
            if self._batcher is not None:
                await self._batcher.close()
            if self.materialized is not None:
                await self.materialized.cleanup()
                self.materialized = None

    async def _report(self, key: SessionKey | None, error: str) -> None:
        frame: dict[str, Any] = {
            "type": "system",
            "subtype": "mirror_error",
            "error": error,
            "key": dict(key) if key is not None else None,
            "uuid": str(uuid.uuid4()),
            "session_id": key.get("session_id", "") if key else "",
        }
        self._errors.append(codec.decode_message(frame))
        self._wake()


def _nothing() -> None:
    return None
