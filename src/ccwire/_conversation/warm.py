"""Warm starts: a CLI started before its prompt is known, or before its session is.

Starting the CLI (process start, module load, configuration, tools, MCP handshakes,
``initialize``) takes most of a new session's first second. Two ways to pay for it
ahead of time, with the semantics of Anthropic's TypeScript SDK:

* `startup()` starts the CLI with the session's options and completes the handshake;
  the prompt comes later, to `WarmQuery.query()`, which then runs like `query()`.
* `prewarm()` starts a **spare**: a CLI parked (``--await-claim``) in a neutral
  folder with the host-level options, before the session's folder is known.
  `SpareProcess.claim()` binds it to a session (``claim_session``: its folder, model,
  permission mode, ... `ClaimOptions`) and sends the prompt;
  `SpareProcess.claim_client()` hands over a connected `ClaudeSDKClient` instead.

A claim the CLI refuses (a folder whose settings fix what the spare already fixed, an
environment variable read at start-up, a spare that died, ...) is not an error here:
ccwire logs a warning on the ``ccwire`` logger, records the CLI's reason in
`SpareProcess.fallback_reason`, and starts the session cold with the equivalent
options (`claimed_options()`), so the caller gets the session either way.

A spare can also hang while parked (stopped, wedged, its SSH link frozen): its CLI
runs but answers nothing. A cheap request (``get_binary_version``, which a parked CLI
answers in milliseconds) is written just ahead of each claim; a spare that has not
answered it within `SPARE_ANSWER_SECONDS` is killed (SIGKILL: it would not act on a
polite stop) and the session starts cold (fallback reason ``spare_unresponsive``), so
a hung spare costs a session those seconds, not the control timeout. A claim that is
merely slow (the folder's MCP servers...) is not cut short: the request ahead of it
was answered.
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, field, fields, replace
from types import TracebackType
from typing import Any, Final

import anyio

from .. import _wire
from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    ControlProtocolError,
    ControlTimeoutError,
    OptionsError,
    SessionStateError,
)
from .._wire import codec, control_requests
from .._wire.control_types import ClaimResult
from .._wire.permission_types import PermissionMode
from .argv import AWAIT_CLAIM_FLAG, agents_to_wire, merged_settings, sdk_servers
from .cli_env import build_env
from .client import ClaudeSDKClient
from .connection import Connection
from .options import AgentDefinition, ClaudeAgentOptions
from .prompt_check import Prompt, check_prompt
from .query import converse

__all__ = [
    "SPARE_ANSWER_SECONDS",
    "ClaimOptions",
    "SpareProcess",
    "WarmQuery",
    "claim_for",
    "claimed_options",
    "open_cold",
    "prewarm",
    "startup",
]

logger = logging.getLogger("ccwire")

SPARE_ANSWER_SECONDS: Final = 3.0
"""Seconds a spare's CLI has to answer a cheap request (ahead of its claim, or a
`SparePool`'s check of a parked spare) before it counts as hung and is killed. A live
CLI answers in milliseconds, parked or not, even over SSH; this is well below a cold
start's ``initialize_timeout`` (60 s by default), which a hung spare would otherwise
cost a session on top of its cold start."""

UNRESPONSIVE: Final = "spare_unresponsive"
"""The reason token of a claim abandoned because the spare did not answer."""


def _with_timeout(
    options: ClaudeAgentOptions | None, initialize_timeout: float | None
) -> ClaudeAgentOptions:
    opts = options or ClaudeAgentOptions()
    if initialize_timeout is not None:
        opts = replace(opts, initialize_timeout=initialize_timeout)
    return opts


# ------------------------------------------------------------------------ startup


class WarmQuery:
    """A CLI started and initialized before its prompt (see `startup()`).

    `query()` sends the prompt and returns the messages, as `query()` would; it can
    be called once. `close()` discards the CLI without a prompt. Use it as an async
    context manager to close it in every case.
    """

    def __init__(self, conn: Connection) -> None:
        self._conn = conn
        self._used = False
        self._closed = False

    @property
    def session_id(self) -> str | None:
        """The CLI's session id, once reported."""
        return self._conn.session_id

    @property
    def server_info(self) -> Mapping[str, Any] | None:
        """The CLI's answer to ``initialize`` (commands, models, account, ...)."""
        return self._conn.server_info

    def query(
        self, prompt: str | AsyncIterable[Prompt]
    ) -> AsyncGenerator[_wire.messages.Message, None]:
        """Send ``prompt`` to the waiting CLI and return the conversation's messages.

        Args:
            prompt: Text, or an async iterable of prompts (as for `query()`).

        Returns:
            The messages (an async iterator); the CLI is stopped at their end, or when
            the iterator is closed.

        Raises:
            TypeError: ``prompt`` is neither text nor an async iterable.
            SessionStateError: `query()` was already called, or the WarmQuery closed.
        """
        check_prompt(prompt)
        if self._closed:
            raise SessionStateError("this WarmQuery was closed: its CLI was stopped")
        if self._used:
            raise SessionStateError("WarmQuery.query() can only be called once")
        self._used = True
        return converse(self._conn, prompt)

    async def close(self) -> None:
        """Stop the CLI (bounded, shielded); idempotent."""
        self._closed = True
        await self._conn.close()

    async def __aenter__(self) -> WarmQuery:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def startup(
    *, options: ClaudeAgentOptions | None = None, initialize_timeout: float | None = None
) -> WarmQuery:
    """Start the CLI and complete its handshake now; send the prompt later.

    ```python
    warm = await startup(options=options)  # while the user types
    async with warm:
        async for message in warm.query("Fix the failing test"):
            print(message)
    ```

    Args:
        options: The session's options (as for `query()`).
        initialize_timeout: Seconds the start and handshake may take (default:
            ``options.initialize_timeout``).

    Returns:
        The waiting CLI.

    Raises:
        CLINotFoundError: No CLI.
        CLIConnectionError: It cannot be started.
        ControlTimeoutError: The handshake took too long.
    """
    from .connection import Connection

    conn = Connection(_with_timeout(options, initialize_timeout))
    await conn.open()
    return WarmQuery(conn)


# ------------------------------------------------------------------------ prewarm


@dataclass(frozen=True)
class ClaimOptions:
    """The per-session half of the options, given when a spare is claimed.

    Everything else (the executable, tools, MCP servers, hooks, ``can_use_tool``,
    settings sources, the environment the CLI reads at start-up, the system prompt)
    was fixed at `prewarm()`.

    Attributes:
        cwd: The session's working directory (required).
        env: Variables added at claim time: only ``CLAUDE_CODE_OAUTH_TOKEN``,
            ``CLAUDE_CODE_SESSION_ACCESS_TOKEN`` and ``CLAUDE_CODE_HOST_SESSION_ID``
            (any other is read at start-up: the CLI refuses the claim).
        additional_directories: More folders the session may use (as ``add_dirs``).
        model: The session's model.
        permission_mode: The session's permission mode (part of the claim: a mode the
            spare cannot take refuses the claim).
        max_thinking_tokens: The thinking budget (``None``: unchanged).
        settings: A flag-settings overlay (e.g. ``{"effortLevel": "high"}``); keys
            that govern hooks are refused (give them to `prewarm()`).
        append_system_prompt: Text appended to the system prompt.
        title: The session's title.
        agents: More programmatic subagents.
    """

    cwd: str | os.PathLike[str]
    env: Mapping[str, str] = field(default_factory=dict)
    additional_directories: Sequence[str] = ()
    model: str | None = None
    permission_mode: PermissionMode | None = None
    max_thinking_tokens: int | None = None
    settings: Mapping[str, Any] | None = None
    append_system_prompt: str | None = None
    title: str | None = None
    agents: Mapping[str, AgentDefinition] | None = None

    def __post_init__(self) -> None:
        hooks = [k for k in control_requests.HOOK_SETTING_KEYS if k in (self.settings or {})]
        if hooks:
            raise OptionsError(
                f"ClaimOptions.settings: hook settings ({', '.join(hooks)}) cannot be applied "
                "at claim; give them to prewarm() in ClaudeAgentOptions.settings"
            )


class _Spare(enum.Enum):
    PARKED = "parked"  # started, waiting for its claim
    CLAIMING = "claiming"  # claim() was called
    CLAIMED = "claimed"  # the CLI took the claim: the session runs on the spare
    FELL_BACK = "fell back"  # the claim was refused: the session runs on a cold CLI
    CLOSED = "closed"


_MOVES: Final = {
    _Spare.PARKED: {_Spare.CLAIMING, _Spare.CLOSED},
    _Spare.CLAIMING: {_Spare.CLAIMED, _Spare.FELL_BACK, _Spare.CLOSED},
    _Spare.CLAIMED: {_Spare.CLOSED},
    _Spare.FELL_BACK: {_Spare.CLOSED},
    _Spare.CLOSED: {_Spare.CLOSED},
}


class SpareProcess:
    """A CLI parked before its session is known (see `prewarm()`). Single use.

    `claim()` binds it to a session and sends the first prompt; `claim_client()`
    binds it and hands over a connected `ClaudeSDKClient`; `close()` discards it.
    A claim the CLI refuses starts the session cold instead (see the module
    docstring); `fallback_reason` then says why.

    Attributes:
        claimed: What the CLI answered to the claim (``None`` before, or after a
            fallback).
        fallback_reason: Why the session was started cold instead (the CLI's reason,
            e.g. ``"cwd_not_found: ..."``), or ``None``.
        not_applied: Options the claimed session runs without (``model`` or
            ``max_thinking_tokens`` refused after the claim), with the reason.
    """

    def __init__(
        self,
        conn: Connection,
        options: ClaudeAgentOptions,
        parking: str | None,
    ) -> None:
        self._conn = conn
        self._options = options
        self._parking = parking  # the parking folder prewarm() made (removed by us)
        self._state = _Spare.PARKED
        self.claimed: ClaimResult | None = None
        self.fallback_reason: str | None = None
        self.not_applied: tuple[str, ...] = ()

    def _move(self, to: _Spare) -> None:
        if to not in _MOVES[self._state]:
            what = "was closed" if self._state is _Spare.CLOSED else "was already claimed"
            raise SessionStateError(f"this spare {what}: a spare can be claimed once")
        self._state = to

    @property
    def options(self) -> ClaudeAgentOptions:
        """The options given to `prewarm()`."""
        return self._options

    @property
    def parked(self) -> bool:
        """True while the spare waits for its claim and its CLI runs."""
        return self._state is _Spare.PARKED and self._conn.is_open

    @property
    def exit_error(self) -> CcwireError | None:
        """Why the spare's CLI connection ended (its exit code and stderr), if it did."""
        protocol = self._conn._protocol
        return None if protocol is None else protocol.closed_error

    async def _answers(self, timeout: float = SPARE_ANSWER_SECONDS) -> bool:
        """Whether the spare's CLI answers a cheap request within ``timeout`` s (a
        refusal is an answer; so is an ended connection: it exited, it did not hang)."""
        try:
            await self._conn.protocol.request(control_requests.GET_BINARY_VERSION, timeout=timeout)
        except ControlTimeoutError:
            return False
        except CcwireError:
            pass
        return True

    async def wait_exited(self) -> None:
        """Wait until the spare's CLI has exited, claimed or not (a parked spare that
        dies should be replaced)."""
        await self._conn.wait_ended()

    def claim(
        self, prompt: str | AsyncIterable[Prompt], options: ClaimOptions
    ) -> AsyncGenerator[_wire.messages.Message, None]:
        """Bind the spare to a session, send ``prompt``, and return the messages.

        Nothing is sent until the first message is asked for. A claim the CLI refuses
        starts the session cold (see `fallback_reason`).

        Args:
            prompt: Text, or an async iterable of prompts (as for `query()`).
            options: The session's folder and per-session options.

        Returns:
            The conversation's messages (an async iterator, as `query()`'s).

        Raises:
            TypeError: ``prompt`` is neither text nor an async iterable.
            SessionStateError: The spare was claimed or closed already.
        """
        check_prompt(prompt)
        self._move(_Spare.CLAIMING)
        return self._claimed_messages(prompt, options)

    async def _claimed_messages(
        self, prompt: str | AsyncIterable[Prompt], claim: ClaimOptions
    ) -> AsyncGenerator[_wire.messages.Message, None]:
        text = prompt if isinstance(prompt, str) else None  # sent right behind the claim
        session = await self._bind(claim, text)
        assert session is not None  # it starts cold rather than say the spare exited
        conn, sent = session
        try:
            async with aclosing(converse(conn, prompt, sent=sent, closes=False)) as messages:
                async for message in messages:
                    yield message
        finally:
            await conn.close()

    @asynccontextmanager
    async def claim_client(self, options: ClaimOptions) -> AsyncIterator[ClaudeSDKClient]:
        """Bind the spare to a session and yield a connected `ClaudeSDKClient` on it.

        ```python
        async with spare.claim_client(ClaimOptions(cwd=folder)) as client:
            await client.query("...")
            async for message in client.receive_response():
                ...
        ```

        The client is disconnected when the block ends. A claim the CLI refuses
        yields a client on a cold CLI (see `fallback_reason`).

        Args:
            options: The session's folder and per-session options.

        Yields:
            The connected client.

        Raises:
            SessionStateError: The spare was claimed or closed already.
        """
        from .client import ClaudeSDKClient

        session = await self._take_session(options)
        assert session is not None  # it starts cold rather than say the spare exited
        conn, _ = session
        client = ClaudeSDKClient(claimed_options(self._options, options))
        await client._attach(conn)
        try:
            yield client
        finally:
            await client.disconnect()

    async def _take_session(
        self, claim: ClaimOptions, prompt: str | None = None, *, cold_if_exited: bool = True
    ) -> tuple[Connection, bool] | None:
        """Claim the spare (once) for ``claim``, or start cold: the session's connection
        (without ``prompt``, its ``server_info`` describes the claimed folder), and
        whether ``prompt`` was sent. Without ``cold_if_exited``, a spare whose CLI had
        exited (which the claim found) gives ``None`` instead of a cold start."""
        self._move(_Spare.CLAIMING)
        return await self._bind(
            claim, prompt, describe=prompt is None, cold_if_exited=cold_if_exited
        )

    async def _bind(
        self,
        claim: ClaimOptions,
        prompt: str | None,
        *,
        describe: bool = False,
        cold_if_exited: bool = True,
    ) -> tuple[Connection, bool] | None:
        """Claim the spare for ``claim`` and send ``prompt`` right behind the claim, or
        start cold: the session's connection, and whether ``prompt`` is sent (``None``:
        the spare's CLI had exited, and not ``cold_if_exited``)."""
        try:
            reason, sent = await self._claim(claim, prompt, describe)
            if reason is None:
                self._conn.claimed()  # its trace: the claimer's
                self._move(_Spare.CLAIMED)
                self._remove_parking()
                return self._conn, sent
            self.fallback_reason = reason
            hung = reason.startswith(UNRESPONSIVE)
            exited = hung or (
                not self._conn.is_open and reason.startswith(("spare_exited", "claim_failed"))
            )
            # a prompt sent behind the claim goes with it, unanswered
            await self._discard(kill=hung)
            self._move(_Spare.FELL_BACK)
            if exited and not cold_if_exited:
                return None
            logger.warning(
                "ccwire: the spare CLI could not be claimed (%s); starting the session cold",
                reason,
            )
            return await open_cold(self._options, claim), False
        except BaseException:
            await self._discard()
            raise

    async def _claim(
        self, claim: ClaimOptions, prompt: str | None, describe: bool
    ) -> tuple[str | None, bool]:
        """Send the claim, with what goes ahead of it and behind it (the options it
        does not carry, then ``prompt``), in the order the CLI applies them: the CLI's
        reason for refusing the claim (``None``: it took it) and whether ``prompt`` was
        sent. Options refused after the claim are recorded in `not_applied` and
        logged (the session runs without them, as in the TypeScript SDK)."""
        conn = self._conn
        if not conn.is_open:
            return "spare_exited: the spare process exited before it was claimed", False
        hung: list[bool] = []
        answer: tuple[str | None, bool] | None = None
        async with anyio.create_task_group() as tg:
            # written ahead of everything (its answer is not awaited before the claim is
            # written): a spare that does not answer it soon is hung, and the claim,
            # however long it may take, is abandoned then
            written = anyio.Event()
            tg.start_soon(self._heed, written, hung, tg.cancel_scope)
            await written.wait()
            answer = await self._claim_steps(claim, prompt, describe)
            tg.cancel_scope.cancel()  # answered or not, the claim's answer came
        if hung:
            return (
                f"{UNRESPONSIVE}: the spare CLI did not answer within "
                f"{SPARE_ANSWER_SECONDS:g} s (hung: stopped, wedged, or its link frozen)",
                True,  # whatever was sent goes with it
            )
        assert answer is not None
        return answer

    async def _heed(
        self, written: anyio.Event, hung: list[bool], claim_scope: anyio.CancelScope
    ) -> None:
        """Send the request that tells a hung spare; when it gets no answer in time,
        note it in ``hung`` and cancel the claim (``claim_scope``)."""
        try:
            await self._conn.protocol.request(
                control_requests.GET_BINARY_VERSION,
                timeout=SPARE_ANSWER_SECONDS,
                on_written=written.set,
            )
        except ControlTimeoutError:
            hung.append(True)
            claim_scope.cancel()
        except CcwireError:
            pass  # refused (an answer), or the connection ended: the claim says so
        finally:
            written.set()  # also when it could not be written

    async def _claim_steps(
        self, claim: ClaimOptions, prompt: str | None, describe: bool
    ) -> tuple[str | None, bool]:
        """The claim itself (see `_claim()`)."""
        conn = self._conn
        settings = claim.settings or {}
        behind = {k: v for k, v in settings.items() if k in control_requests.SETTINGS_BEHIND_CLAIM}
        ahead = {k: v for k, v in settings.items() if k not in behind}
        if ahead:  # it decides what the claim starts: the claim waits for its answer
            try:
                await conn.protocol.request(
                    control_requests.APPLY_FLAG_SETTINGS, {"settings": ahead}
                )
            except ControlProtocolError as exc:
                return f"settings_not_applied: {_refusal(exc)}", False
            except CcwireError as exc:
                return f"claim_failed: {exc}", False
        steps = [("claim", control_requests.CLAIM_SESSION, self._claim_fields(claim, describe))]
        if claim.model is not None:
            steps.append(("model", codec.SET_MODEL, {"model": claim.model}))
        if claim.max_thinking_tokens is not None:
            fields = {"max_thinking_tokens": claim.max_thinking_tokens}
            steps.append(("max_thinking_tokens", control_requests.SET_MAX_THINKING_TOKENS, fields))
        if behind:
            steps.append(("settings", control_requests.APPLY_FLAG_SETTINGS, {"settings": behind}))
        answers: dict[str, Mapping[str, Any] | CcwireError] = {}
        sent = False
        async with anyio.create_task_group() as tg:
            for name, subtype, fields in steps:  # written in this order, answered together
                written = anyio.Event()
                tg.start_soon(_ask, conn, name, subtype, fields, written, answers)
                await written.wait()
            if prompt is not None and not isinstance(answers.get("claim"), CcwireError):
                try:
                    await conn.send_prompt(prompt, session_id="")
                    sent = True
                except CcwireError:
                    pass  # the spare is gone: the claim's answer says so
        answer = answers["claim"]
        if isinstance(answer, ControlProtocolError):
            return _refusal(answer), sent
        if isinstance(answer, CcwireError):
            return f"claim_failed: {answer}", sent
        self.claimed = control_requests.decode_claim(answer)
        conn.session_id = self.claimed.session_id or conn.session_id
        payload = control_requests.claim_initialize(answer)
        if payload is not None:  # the claimed session, over what the spare reported
            conn.server_info = {**(conn.server_info or {}), **payload}
        refused = [
            f"{name}: {_refusal(a) if isinstance(a, ControlProtocolError) else a}"
            for name, a in answers.items()
            if name != "claim" and isinstance(a, CcwireError)
        ]
        if refused:
            self.not_applied = tuple(refused)
            logger.warning(
                "ccwire: the claimed session runs without these options: %s", "; ".join(refused)
            )
        return None, sent

    def _claim_fields(self, claim: ClaimOptions, describe: bool) -> dict[str, Any]:
        return control_requests.claim_session_fields(
            cwd=os.fspath(claim.cwd),
            env=claim.env,
            additional_directories=list(claim.additional_directories),
            permission_mode=claim.permission_mode,
            append_system_prompt=claim.append_system_prompt,
            title=claim.title,
            agents=agents_to_wire(claim.agents) if claim.agents else None,
            sdk_mcp_servers=sorted(sdk_servers(self._options.mcp_servers)),
            include_initialize=describe,
        )

    async def close(self) -> None:
        """Discard the spare (before a claim), or end its session (after one); idempotent."""
        self._state = _Spare.CLOSED
        await self._discard()

    async def _discard(self, *, kill: bool = False) -> None:
        """Stop the CLI (at once with ``kill``: it is hung) and remove the parking folder."""
        with anyio.CancelScope(shield=True):
            await (self._conn.kill() if kill else self._conn.close())
            self._remove_parking()

    def _remove_parking(self) -> None:
        parking, self._parking = self._parking, None
        if parking is not None:
            import shutil  # only when a parking folder was made

            shutil.rmtree(parking, ignore_errors=True)

    async def __aenter__(self) -> SpareProcess:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()


async def _ask(
    conn: Connection,
    name: str,
    subtype: str,
    fields: Mapping[str, Any],
    written: anyio.Event,
    answers: dict[str, Mapping[str, Any] | CcwireError],
) -> None:
    """One request of a claim; its answer (or error) goes to ``answers[name]``."""
    try:
        answers[name] = await conn.protocol.request(subtype, fields, on_written=written.set)
    except CcwireError as exc:
        answers[name] = exc
    finally:
        written.set()  # also when it could not be written


def _refusal(exc: ControlProtocolError) -> str:
    """The CLI's own words from a refused request (they start with a reason token)."""
    text = str(exc.args[0]) if exc.args else str(exc)
    _, sep, reason = text.partition("': ")
    return reason if sep else text


async def prewarm(
    *, options: ClaudeAgentOptions | None = None, initialize_timeout: float | None = None
) -> SpareProcess:
    """Start a spare CLI before its session is known; claim it later.

    ```python
    spare = await prewarm(options=host_options)
    # ... later, when the user opens a session in `folder`:
    async for message in spare.claim("Fix the failing test", ClaimOptions(cwd=folder)):
        print(message)
    ```

    The CLI starts with ``options`` (tools, MCP servers, hooks, ``can_use_tool``,
    settings, environment: fixed for the life of the spare) in a parking folder:
    ``options.cwd`` if set (which is never the session's folder; a spawner that runs
    the CLI elsewhere needs one that exists there), else a new private folder under
    the CLI's configuration folder (``CLAUDE_CONFIG_DIR``, else ``~/.claude``),
    removed once the spare is claimed or closed. While parked it holds a few hundred
    MB and is otherwise idle.

    Args:
        options: The host-level options (``resume``, ``continue_conversation``,
            ``fork_session`` and ``session_store`` describe a session: not here).
        initialize_timeout: Seconds the start and handshake may take (default:
            ``options.initialize_timeout``).

    Returns:
        The parked spare.

    Raises:
        ValueError: ``options`` describe a session, or there is no absolute
            configuration folder to park under.
        CLINotFoundError: No CLI.
        CLIConnectionError: It cannot be started, or it is too old to park, or the
            folder to park it in cannot be made.
        ControlTimeoutError: The handshake took too long.
    """
    from .connection import Connection

    opts = _with_timeout(options, initialize_timeout)
    if opts.resume or opts.continue_conversation or opts.fork_session:
        raise OptionsError(
            "prewarm(): resume, continue_conversation and fork_session describe a session; "
            "a spare has none: pass them to query() instead"
        )
    if opts.session_store is not None:
        raise OptionsError("prewarm(): session_store is not supported with spares (use query())")
    parking = None if opts.cwd is not None else _make_parking(opts)
    spare_opts = replace(
        opts,
        cwd=opts.cwd if parking is None else parking,
        extra_args={**opts.extra_args, AWAIT_CLAIM_FLAG: None},
    )
    conn = Connection(spare_opts, spare=True)
    try:
        await conn.open()
    except BaseException:
        if parking is not None:
            import shutil

            shutil.rmtree(parking, ignore_errors=True)
        raise
    return SpareProcess(conn, opts, parking)


def _make_parking(options: ClaudeAgentOptions) -> str:
    """A new private folder for a spare, under the CLI's configuration folder."""
    import tempfile

    env = build_env(options, base_env=os.environ)
    home = env.get("HOME", "").strip()
    config = env.get("CLAUDE_CONFIG_DIR", "").strip() or (
        os.path.join(home, ".claude") if home else os.path.expanduser("~/.claude")
    )
    if not os.path.isabs(config):
        raise OptionsError(
            "prewarm(): no absolute configuration folder to park the spare under "
            "(CLAUDE_CONFIG_DIR or HOME); set one, or pass options.cwd"
        )
    spares = os.path.join(config, "spares")
    try:
        os.makedirs(spares, mode=0o700, exist_ok=True)
        return tempfile.mkdtemp(prefix="spare-", dir=spares)
    except OSError as exc:
        raise CLIConnectionError(
            f"prewarm(): cannot make the spare's folder in {spares!r} (under the CLI's "
            f"configuration folder, from CLAUDE_CONFIG_DIR or HOME): {exc}; fix that folder, "
            "or pass options.cwd"
        ) from exc


# ------------------------------------------------------------------ cold fallback


def claimed_options(options: ClaudeAgentOptions, claim: ClaimOptions) -> ClaudeAgentOptions:
    """The options of a cold start equivalent to claiming a spare of ``options``.

    Args:
        options: The options the spare was started with.
        claim: The claim.

    Returns:
        ``options`` with the claim's folder, model, permission mode, thinking budget,
        directories, variables, agents, settings overlay and appended system prompt.
    """
    changes: dict[str, Any] = {"cwd": os.fspath(claim.cwd)}
    if claim.env:
        changes["env"] = {**options.env, **claim.env}
    if claim.additional_directories:
        changes["add_dirs"] = [*options.add_dirs, *claim.additional_directories]
    if claim.model is not None:
        changes["model"] = claim.model
    if claim.permission_mode is not None:
        changes["permission_mode"] = claim.permission_mode
    if claim.max_thinking_tokens is not None:
        changes["max_thinking_tokens"] = claim.max_thinking_tokens
    if claim.agents:
        changes["agents"] = {**(options.agents or {}), **claim.agents}
    if claim.settings:
        changes["settings"] = merged_settings(options, claim.settings)
    if claim.append_system_prompt:
        changes.update(_appended(options, claim.append_system_prompt))
    return replace(options, **changes)


def _appended(options: ClaudeAgentOptions, text: str) -> dict[str, Any]:
    prompt = options.system_prompt
    if prompt is None or isinstance(prompt, str):
        return {"system_prompt": f"{prompt}\n\n{text}" if prompt else text}
    if isinstance(prompt, list):
        return {"system_prompt": [*prompt, text]}
    if prompt.get("type") == "preset":
        before = prompt.get("append")
        return {"system_prompt": {**prompt, "append": f"{before}\n\n{text}" if before else text}}
    return {"extra_args": {**options.extra_args, "append-system-prompt": text}}


async def open_cold(options: ClaudeAgentOptions, claim: ClaimOptions | None) -> Connection:
    """Open a connection with ``options``, or with the cold equivalent of claiming a
    spare of ``options`` for ``claim`` (its title is set once the CLI runs)."""
    from .connection import Connection

    opts = options if claim is None else claimed_options(options, claim)
    conn = Connection(opts)
    await conn.open()
    if claim is not None and claim.title is not None:
        try:
            await conn.protocol.request(control_requests.RENAME_SESSION, {"title": claim.title})
        except CcwireError as exc:  # a title is not worth the session
            logger.warning("ccwire: the session's title could not be set: %s", exc)
        except BaseException:  # cancelled: the CLI is not left running
            await conn.close()
            raise
    return conn


_CLAIMABLE_FIELDS: Final = frozenset({"cwd", "model", "permission_mode", "max_thinking_tokens"})


def claim_for(base: ClaudeAgentOptions, target: ClaudeAgentOptions) -> ClaimOptions | None:
    """The claim that turns a spare of ``base`` into a session of ``target``.

    Args:
        base: The options a spare was started with.
        target: The options of the session wanted.

    Returns:
        The claim, or ``None`` when ``target`` differs from ``base`` in something a
        claim cannot change (tools, system prompt, hooks, environment, ...), or
        leaves unset what ``base`` sets.
    """
    for f in fields(ClaudeAgentOptions):
        if f.name in _CLAIMABLE_FIELDS:
            continue
        if getattr(base, f.name) != getattr(target, f.name):
            return None
    changed: dict[str, Any] = {}
    for name in ("model", "permission_mode", "max_thinking_tokens"):
        wanted, spared = getattr(target, name), getattr(base, name)
        if wanted == spared:
            continue
        if wanted is None:
            return None  # a claim cannot unset what the spare was started with
        changed[name] = wanted
    return ClaimOptions(cwd=os.fspath(target.cwd or os.getcwd()), **changed)
