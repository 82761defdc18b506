"""``ClaudeSDKClient``: a multi-turn conversation with the Claude Code CLI."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from types import TracebackType
from typing import Any

from . import _codec as codec
from ._connection import Connection, Prompt
from ._errors import CLIConnectionError
from ._messages import Message
from ._options import ClaudeAgentOptions
from ._permission_types import PermissionMode
from ._transport import Transport

__all__ = ["ClaudeSDKClient"]


class ClaudeSDKClient:
    """A multi-turn conversation with one Claude Code CLI process.

    Use it as an async context manager (or call :meth:`connect` / :meth:`disconnect`
    from the same task)::

        async with ClaudeSDKClient(options) as client:
            await client.query("Greet Alice")
            async for message in client.receive_response():
                print(message)

    Prompts sent back to back may be merged by the CLI into one turn, and a prompt sent
    mid-turn is folded into the running turn; :meth:`receive_response` knows this and
    never waits for a result that will not come.
    """

    def __init__(
        self, options: ClaudeAgentOptions | None = None, *, transport: Transport | None = None
    ) -> None:
        self.options = options or ClaudeAgentOptions()
        self._transport = transport
        self._conn: Connection | None = None

    # -------------------------------------------------------------- lifecycle

    async def connect(self, prompt: str | AsyncIterable[Prompt] | None = None) -> None:
        """Start the CLI and complete the handshake; optionally send a first prompt.

        ``prompt`` may be text or an async iterable of messages (streamed in the
        background). Raises :class:`~ccwire.CLINotFoundError`,
        :class:`~ccwire.ProcessError` or :class:`~ccwire.ControlTimeoutError`.
        """
        if self._conn is not None:
            raise CLIConnectionError("already connected")
        conn = Connection(self.options, self._transport)
        await conn.open()
        self._conn = conn
        if isinstance(prompt, str):
            await conn.send_prompt(prompt)
        elif prompt is not None:
            conn.start_soon(conn.stream_prompts, prompt)

    async def disconnect(self) -> None:
        """End the conversation and stop the CLI (bounded). Safe to call twice."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.disconnect()

    def _connection(self) -> Connection:
        if self._conn is None:
            raise CLIConnectionError("not connected: call connect() first")
        return self._conn

    # ------------------------------------------------------------------ turns

    async def query(
        self,
        prompt: str | list[dict[str, Any]] | AsyncIterable[Prompt],
        session_id: str = "default",
    ) -> None:
        """Send a prompt (text, content blocks, or an async iterable of messages)."""
        conn = self._connection()
        if isinstance(prompt, (str, list)):
            await conn.send_prompt(prompt, session_id=session_id)
        else:
            await conn.stream_prompts(prompt, session_id=session_id)

    async def receive_messages(self) -> AsyncIterator[Message]:
        """Every message until the CLI's output ends."""
        async for message in self._connection().messages(until_result=False):
            yield message

    async def receive_response(self) -> AsyncIterator[Message]:
        """Messages up to and including the next ``ResultMessage``.

        Returns early, without waiting, when no prompt is owed an answer.
        """
        async for message in self._connection().messages(until_result=True):
            yield message

    # ---------------------------------------------------------------- control

    async def interrupt(self) -> Mapping[str, Any]:
        """Stop the current turn; the conversation stays usable. Returns the CLI's answer
        (``still_queued`` lists prompts still waiting, on CLIs that report it)."""
        return await self._connection().protocol.request(codec.INTERRUPT)

    async def set_permission_mode(self, mode: PermissionMode) -> Mapping[str, Any]:
        """Change the permission mode for the rest of the conversation."""
        return await self._connection().protocol.request(codec.SET_PERMISSION_MODE, {"mode": mode})

    async def set_model(self, model: str | None = None) -> Mapping[str, Any]:
        """Switch model (``None`` resets to the default); returns ``{"model": resolved}``."""
        return await self._connection().protocol.request(codec.SET_MODEL, {"model": model})

    async def get_server_info(self) -> Mapping[str, Any] | None:
        """The CLI's answer to ``initialize`` (commands, models, capabilities, ...)."""
        return self._connection().server_info

    @property
    def session_id(self) -> str | None:
        """The CLI's session id, once reported."""
        return self._conn.session_id if self._conn is not None else None
