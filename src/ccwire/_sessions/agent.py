"""``ClaudeCodeAgent``: starts, tracks and resumes sessions.

An agent holds the options every session starts from, the store sessions save their
snapshots to, and an optional limit on how many sessions run at once. In-process
MCP servers in the options are shared by every session: each session has its own
connection, and a tool handler that asks for a `ToolContext` gets the
session id of the call it serves.

Sessions run in a task group: the agent's (``async with ClaudeCodeAgent(...) as
agent``, then ``start_session``) or one of their own (``async with
agent.session(prompt) as session``, which needs no agent context).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Literal

import anyio
import anyio.abc

from .._conversation.argv import sdk_servers
from .._conversation.cli_paths import valid_uuid
from .._conversation.options import ClaudeAgentOptions
from .._conversation.prompt_check import check_prompt
from .._conversation.transcript_store.protocol import SessionStore
from .._core.async_only import AsyncWithOnly
from .._core.errors import OptionsError, SessionInUseError, SessionStateError, SessionStoreError
from .._core.tasks import TaskHost
from .._transport.base import Transport
from .machine import SessionMachine
from .owner import current_owner, running_here, session_liveness
from .session import Session, SessionPrompt
from .state import SessionStats
from .store import SnapshotStore, SQLiteSnapshotStore, load_snapshot
from .stores.snapshots import as_snapshot_store

__all__ = ["ClaudeCodeAgent"]

logger = logging.getLogger("ccwire")

TransportFactory = Callable[[ClaudeAgentOptions], Transport]


class ClaudeCodeAgent(AsyncWithOnly):
    """Runs many `Session` objects on shared options.

    ``store`` keeps a snapshot of every session after each transition: the default
    (``None``) is an `SQLiteSnapshotStore` in the user's data directory,
    ``False`` keeps nothing; a transcript `SessionStore` (PostgreSQL, Redis...) keeps
    them too, through `StoreSnapshots`. ``max_concurrent_sessions`` limits how many sessions hold
    a CLI process at once; the others wait (in state ``idle``) for a slot, and a slot is
    freed when a session is closed. ``transport_factory`` replaces the CLI subprocess
    (tests use an in-memory fake).

    For example:

        async with ClaudeCodeAgent(options) as agent:
            session = await agent.start_session("Calculate 15 + 27")
            async for message in session.messages():
                print(message)
    """

    _ASYNC_WITH = "async with ClaudeCodeAgent(options) as agent:"

    def __init__(
        self,
        options: ClaudeAgentOptions | None = None,
        *,
        store: SnapshotStore | SessionStore | Literal[False] | None = None,
        max_concurrent_sessions: int | None = None,
        transport_factory: TransportFactory | None = None,
    ) -> None:
        limit = max_concurrent_sessions
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise OptionsError(
                f"max_concurrent_sessions must be an int or None, not {type(limit).__name__}"
            )
        if limit is not None and limit < 1:
            raise OptionsError(f"max_concurrent_sessions must be at least 1, got {limit}")
        if options is not None and not isinstance(options, ClaudeAgentOptions):
            raise OptionsError(
                f"options must be a ClaudeAgentOptions, not {type(options).__name__}"
            )
        self.options = options or ClaudeAgentOptions()
        self.store: SnapshotStore | None = (
            None
            if store is False
            else as_snapshot_store(store)
            if store is not None
            else SQLiteSnapshotStore()
        )
        """Where snapshots go (``None`` when persistence is off)."""
        self.max_concurrent_sessions = max_concurrent_sessions
        self._transport_factory = transport_factory
        self._capacity: anyio.CapacityLimiter | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._host: TaskHost | None = None
        self._live: list[Session] = []

    # -------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> ClaudeCodeAgent:
        if self._tg is not None:
            raise SessionStateError("this agent is already running")
        # the sessions' tasks live in a host task of their own (not in the scopes of the
        # task that entered): leaving the agent from another scope or task is safe
        self._host = TaskHost("ccwire agent")
        self._tg = await self._host.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        self._tg = None
        host, self._host = self._host, None
        assert host is not None
        try:
            with anyio.CancelScope(shield=True):
                await self.aclose_sessions()
        finally:
            await host.aclose()
        return None

    async def aclose_sessions(self) -> None:
        """Close every live session (in-flight work is cancelled), all at once, bounded.

        Raises:
            SessionStoreError: A session's store did not save its last snapshots, in
                time (a `SnapshotTimeoutError`) or at all (the first such error; every
                session is closed all the same).
        """
        late: list[SessionStoreError] = []

        async def close(session: Session) -> None:
            try:
                await session.close()
            except SessionStoreError as exc:
                late.append(exc)

        async with anyio.create_task_group() as tg:
            for session in list(self._live):
                tg.start_soon(close, session)
        if late:
            raise late[0]

    def sessions(self) -> list[Session]:
        """The live sessions: started and not yet closed."""
        return list(self._live)

    # --------------------------------------------------------------- sessions

    def create_session(
        self,
        prompt: SessionPrompt,
        project_path: str | os.PathLike[str] | None = None,
        *,
        session_id: str | None = None,
    ) -> Session:
        """A new session in state ``idle``: register callbacks, then ``await session.start()``.

        ``project_path`` is the CLI's working directory (default: the options' ``cwd``,
        else the current directory); ``session_id`` a UUID to use (default: a new one).
        Raises `OptionsError` for a ``session_id`` that is not a UUID string (the CLI
        refuses it) or a ``project_path`` that is not a path.
        """
        if session_id is not None and not (isinstance(session_id, str) and valid_uuid(session_id)):
            raise OptionsError(f"session_id must be a UUID string, got {session_id!r}")
        sid = session_id or str(uuid.uuid4())
        cwd = self._project_path(project_path)
        options = dataclasses.replace(
            self.options,
            cwd=cwd,
            session_id=sid,
            resume=None,
            fork_session=False,
            continue_conversation=False,
        )
        return self._make(prompt, options, sid)

    async def start_session(
        self, prompt: SessionPrompt, project_path: str | os.PathLike[str] | None = None
    ) -> Session:
        """Start a session and return it once the CLI is running and the prompt is on its
        way. Needs ``async with agent``. Raises what the CLI start raises (for example
        `CLINotFoundError`); the session is then ``failed``."""
        session = self.create_session(prompt, project_path)
        await session.start()
        return session

    @asynccontextmanager
    async def session(
        self, prompt: SessionPrompt, project_path: str | os.PathLike[str] | None = None
    ) -> AsyncIterator[Session]:
        """``async with agent.session(prompt) as session:`` a started session, closed at the
        end of the block (work still in flight is cancelled). Needs no agent context."""
        session = self.create_session(prompt, project_path)
        async with anyio.create_task_group() as tg:
            await session._launch(tg)
            try:
                yield session
            finally:
                with anyio.CancelScope(shield=True):
                    await session.close()

    async def resume_session(
        self,
        session_id: str,
        prompt: SessionPrompt,
        *,
        fork: bool = False,
        project_path: str | os.PathLike[str] | None = None,
    ) -> Session:
        """Continue a finished or crashed session in a new CLI process (``--resume``).

        The CLI finds the conversation by id under the project directory it runs in, so
        ``project_path`` defaults to the one the store recorded. Without ``fork`` the
        session keeps its id and its statistics carry on; with ``fork`` the CLI copies the
        conversation into a new session id. Needs ``async with agent``.

        Raises `SessionInUseError` (without ``fork``) if the session is
        still live in this process, in this agent or another: continue it with
        ``session.send()`` or close it first. A session whose stored snapshot says it
        still runs in another process (see `session_liveness()`) is resumed,
        with a warning on the ``ccwire`` logger. Raises `OptionsError` for a
        ``session_id`` that is not a non-empty str, and `SessionStoreError` when the
        store fails to look the session up, or does not answer within its
        ``snapshot_timeout`` (nothing is started then).
        """
        if not isinstance(session_id, str) or not session_id:
            raise OptionsError(f"session_id must be a non-empty str, got {session_id!r}")
        saved = await load_snapshot(self.store, session_id) if self.store is not None else None
        # no await from here to session.start() registering the new session
        live = running_here(session_id)
        if live is not None and not fork:
            raise SessionInUseError(
                f"session {session_id} is still live in this process ({live.state.value}): "
                "continue it with session.send(), or close it before resuming it "
                "(fork=True copies it into a new session)",
                session_id=session_id,
                state=live.state.value,
            )
        if saved is not None and live is None and session_liveness(saved) == "live":
            owner = saved.owner
            logger.warning(
                "ccwire: resuming session %s, which the store says is still %s in process %s on %s",
                session_id,
                saved.state.value,
                owner.pid if owner else "?",
                owner.host if owner else "?",
            )
        if project_path is None and saved is not None:
            project_path = saved.project_path
        cwd = self._project_path(project_path)
        new_id = str(uuid.uuid4()) if fork else session_id
        options = dataclasses.replace(
            self.options,
            cwd=cwd,
            resume=session_id,
            fork_session=fork,
            session_id=new_id if fork else None,
            continue_conversation=False,
        )
        prior = saved.stats if saved is not None and not fork else SessionStats()
        session = self._make(prompt, options, new_id, resumed_from=session_id, prior=prior)
        await session.start()
        return session

    # ------------------------------------------------------------- internals

    def _make(
        self,
        prompt: SessionPrompt,
        options: ClaudeAgentOptions,
        session_id: str,
        *,
        resumed_from: str | None = None,
        prior: SessionStats | None = None,
    ) -> Session:
        check_prompt(prompt, blocks=True)  # before a transport is made for it
        machine = SessionMachine(
            session_id,
            project_path=str(options.cwd) if options.cwd is not None else None,
            resumed_from=resumed_from,
            prior=prior,
            sdk_servers=frozenset(sdk_servers(options.mcp_servers)),
            owner=current_owner(),
        )
        transport = self._transport_factory(options) if self._transport_factory else None
        return Session(
            _AgentHost(self), prompt, options, machine, store=self.store, transport=transport
        )

    def _project_path(self, project_path: str | os.PathLike[str] | None) -> str:
        if project_path is not None and not isinstance(project_path, (str, os.PathLike)):
            raise OptionsError(
                f"project_path must be a str or a path, not {type(project_path).__name__}"
            )
        chosen = project_path if project_path is not None else self.options.cwd
        return str(Path(chosen).resolve()) if chosen is not None else os.getcwd()

    def _require_task_group(self) -> anyio.abc.TaskGroup:
        if self._tg is None:
            raise SessionStateError(
                "the agent is not running: use `async with ClaudeCodeAgent(...) as agent:` "
                "(or `async with agent.session(prompt) as session:`)"
            )
        return self._tg

    def _limiter(self) -> anyio.CapacityLimiter | None:
        if self.max_concurrent_sessions is None:
            return None
        if self._capacity is None:
            self._capacity = anyio.CapacityLimiter(self.max_concurrent_sessions)
        return self._capacity


class _AgentHost:
    """An agent as its sessions see it (`SessionHost`): task group, slots, live list."""

    def __init__(self, agent: ClaudeCodeAgent) -> None:
        self._agent = agent

    def task_group(self) -> anyio.abc.TaskGroup:
        return self._agent._require_task_group()

    def limiter(self) -> anyio.CapacityLimiter | None:
        return self._agent._limiter()

    def register(self, session: Session) -> None:
        self._agent._live.append(session)

    def unregister(self, session: Session) -> None:
        if session in self._agent._live:
            self._agent._live.remove(session)
