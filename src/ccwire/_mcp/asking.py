"""A tool asking its client: `ToolContext.elicit()` and `ToolContext.sample()`.

Both send a request to the MCP client that called the tool (``elicitation/create``,
``sampling/createMessage``) and wait, bounded, for its answer.  Under ``ccwire
serve`` the client is the MCP client (an IDE, the Inspector, ...).  In-process under
the Claude Code CLI, the CLI is the client: CLI 2.1.330 declares no client
capabilities to SDK servers and answers both requests with -32601 (method not
found), so both raise `UnsupportedFeatureError` there at once, without a round trip.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from .._core.errors import McpError, UnsupportedFeatureError
from .outbound import Requester
from .schema import to_json_schema

__all__ = ["AskingClient", "Requester"]

_METHOD_NOT_FOUND: Final = -32601


class AskingClient:
    """The methods of `ToolContext` that send requests to the client."""

    request: Requester | None
    client_capabilities: Mapping[str, Any] | None

    def _require(self, capability: str, method: str) -> Requester:
        caps = self.client_capabilities
        if self.request is None:
            raise UnsupportedFeatureError(
                f"{method}: this tool call has no channel to its client", subtype=method
            )
        if caps is not None and not isinstance(caps.get(capability), Mapping):
            raise UnsupportedFeatureError(
                f"{method}: the client did not declare the {capability!r} capability "
                "(the Claude Code CLI declares none to in-process servers; serve the tool "
                "with `ccwire serve` to a client that supports it)",
                subtype=method,
            )
        return self.request

    async def _ask(self, capability: str, method: str, params: dict[str, Any],
                   timeout: float | None) -> dict[str, Any]:  # fmt: skip
        request = self._require(capability, method)
        try:
            return dict(await request(method, params, timeout))
        except McpError as exc:
            if exc.code == _METHOD_NOT_FOUND:
                raise UnsupportedFeatureError(
                    f"{method}: the client refused it ({exc.message})", subtype=method
                ) from exc
            raise

    async def elicit(
        self,
        message: str,
        schema: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Ask the user, through the client, for input (``elicitation/create``).

        Args:
            message: What to ask.
            schema: The fields wanted: a JSON Schema object with flat properties, or
                the same shorthand as ``@tool`` (``{"name": str, "age": int}``).
                Default: no fields (a yes/no confirmation).
            timeout: Seconds to wait for the answer (default 300).

        Returns:
            The client's ``ElicitResult``: ``{"action": "accept", "content": {...}}``,
            ``{"action": "decline"}`` or ``{"action": "cancel"}``.

        Raises:
            UnsupportedFeatureError: The client cannot elicit (it did not declare the
                ``elicitation`` capability, or refused the request), or there is no
                client to ask.
            McpError: The client answered with an error, or gave no answer within
                ``timeout`` (code -32001; the client is told the request was cancelled).
        """
        wanted = (
            {"type": "object", "properties": {}} if schema is None
            else dict(to_json_schema(schema, "requested_schema"))
        )  # fmt: skip
        wanted.pop("additionalProperties", None)
        params = {"message": message, "requestedSchema": wanted}
        return await self._ask("elicitation", "elicitation/create", params, timeout)

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        Args:
            messages: A prompt (one user message), or ``SamplingMessage`` dicts
                (``{"role": "user", "content": {"type": "text", "text": ...}}``).
            max_tokens: The most tokens to generate.
            system_prompt: An optional system prompt.
            temperature: An optional sampling temperature.
            timeout: Seconds to wait for the answer (default 300).
            **extra: Further ``CreateMessageRequest`` params, as sent
                (``modelPreferences``, ``stopSequences``, ``includeContext``...).

        Returns:
            The client's ``CreateMessageResult``, a dict like
            `{"role": "assistant", "content": {...}, "model": ..., "stopReason": ...}`.

        Raises:
            UnsupportedFeatureError: The client cannot sample (see `elicit()`).
            McpError: The client answered with an error, or gave no answer within
                ``timeout`` (code -32001).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": [dict(m) for m in messages], "maxTokens": max_tokens}
        if system_prompt is not None:
            params["systemPrompt"] = system_prompt
        if temperature is not None:
            params["temperature"] = temperature
        params.update(extra)
        return await self._ask("sampling", "sampling/createMessage", params, timeout)
