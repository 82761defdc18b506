"""Reply builders for `ScriptedModel` and the view of a request.

A test scripts what "the model" answers with the builders below::

    text("Hi there")                                  # one text block
    tool_use("Bash", {"command": "echo hi"})          # one tool_use block
    reply(thinking("hmm"), tool_use("Read", {...}),   # several blocks in ONE message
          tool_use("Grep", {...}))
    error(529, "Overloaded", type="overloaded_error") # an API error response

A bare block (``text(...)``, ``tool_use(...)``, ``thinking(...)``) can be used directly
as a script step: it stands for ``reply(block)``.  This module also turns replies into
the exact wire format of the Anthropic Messages API (a full Message JSON, or the list
of server-sent events of a streamed one).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .._core.errors import OptionsError

__all__ = [
    "Block",
    "ErrorReply",
    "ModelRequest",
    "Reply",
    "Step",
    "StepResult",
    "TextBlock",
    "ThinkingBlock",
    "ToolResult",
    "ToolUseBlock",
    "error",
    "reply",
    "text",
    "thinking",
    "tool_use",
]

_ALNUM = string.ascii_letters + string.digits
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_SECRET_HEADERS = frozenset({"x-api-key", "authorization", "proxy-authorization"})

DEFAULT_USAGE: Mapping[str, int] = {
    "input_tokens": 100,
    "output_tokens": 20,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}
"""Usage reported for every scripted reply unless ``reply(usage=...)`` overrides it."""


def _random_id(prefix: str, length: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALNUM) for _ in range(length))


@dataclass(frozen=True)
class TextBlock:
    """An assistant ``text`` content block."""

    text: str

    def to_api(self) -> dict[str, Any]:
        """Return the block as the Messages API spells it."""
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class ToolUseBlock:
    """An assistant ``tool_use`` content block; ``id`` is fixed when the block is built."""

    name: str
    input: Mapping[str, Any]
    id: str

    def to_api(self) -> dict[str, Any]:
        """Return the block as the Messages API spells it."""
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}


@dataclass(frozen=True)
class ThinkingBlock:
    """An assistant ``thinking`` content block with an (unverified) signature."""

    thinking: str
    signature: str

    def to_api(self) -> dict[str, Any]:
        """Return the block as the Messages API spells it."""
        return {"type": "thinking", "thinking": self.thinking, "signature": self.signature}


Block: TypeAlias = TextBlock | ToolUseBlock | ThinkingBlock
"""Any assistant content block a script can produce."""


@dataclass(frozen=True)
class Reply:
    """One complete assistant message: its content blocks, stop reason and usage."""

    content: tuple[Block, ...]
    stop_reason: str = "end_turn"
    usage: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_USAGE))

    @property
    def tool_uses(self) -> tuple[ToolUseBlock, ...]:
        """The ``tool_use`` blocks of this reply, in order."""
        return tuple(b for b in self.content if isinstance(b, ToolUseBlock))


@dataclass(frozen=True)
class ErrorReply:
    """An API error response: HTTP ``status`` plus an Anthropic-style error body.

    ``retry`` controls the ``x-should-retry`` header the Anthropic client honours:
    ``None`` sends no header (the CLI then retries 408/409/429/5xx on its own schedule).
    """

    status: int
    message: str
    type: str = "api_error"
    retry: bool | None = None

    def to_api(self) -> dict[str, Any]:
        """Return the JSON error body: ``{"type": "error", "error": {type, message}}``."""
        return {"type": "error", "error": {"type": self.type, "message": self.message}}


def text(text: str) -> TextBlock:
    """Build a text block; usable as a whole step (a reply ending the turn)."""
    return TextBlock(_text_arg("text", text))


def tool_use(name: str, input: Mapping[str, Any], *, id: str | None = None) -> ToolUseBlock:
    """Build a ``tool_use`` block calling ``name`` with ``input``.

    Without ``id`` one like ``toolu_<24 random letters/digits>`` is generated now, so a
    test can keep the block and match ``block.id`` against the ``tool_result`` later.
    Used as a whole step it is a reply with ``stop_reason="tool_use"``.
    """
    json.dumps(input)  # fail early, in the test, on input that is not JSON
    return ToolUseBlock(name=name, input=dict(input), id=id or _random_id("toolu_"))


def thinking(text: str, *, signature: str | None = None) -> ThinkingBlock:
    """Build a thinking block; a random base64 signature is made up if none is given."""
    sig = signature or base64.b64encode(secrets.token_bytes(48)).decode("ascii")
    return ThinkingBlock(thinking=_text_arg("thinking", text), signature=sig)


def _text_arg(maker: str, value: object) -> str:
    """``value``, the text of a block made by ``maker()``, if it is a str (a reply with
    another value is one the CLI cannot read: it retries, and fails far from the cause)."""
    if not isinstance(value, str):
        raise OptionsError(
            f"{maker}() takes a str, not {type(value).__name__}: write {maker}({str(value)!r})"
        )
    return value


def reply(
    *blocks: Block, stop_reason: str | None = None, usage: Mapping[str, int] | None = None
) -> Reply:
    """Build one assistant message out of ``blocks`` (several tool_use blocks allowed).

    ``stop_reason`` defaults to ``"tool_use"`` when any block is a tool_use, else
    ``"end_turn"``.  ``usage`` entries override `DEFAULT_USAGE` key by key.
    """
    for block in blocks:
        if not isinstance(block, (TextBlock, ToolUseBlock, ThinkingBlock)):
            raise OptionsError(f"reply() takes content blocks, not {type(block).__name__}")
    if stop_reason is None:
        has_tool = any(isinstance(b, ToolUseBlock) for b in blocks)
        stop_reason = "tool_use" if has_tool else "end_turn"
    return Reply(content=blocks, stop_reason=stop_reason, usage={**DEFAULT_USAGE, **(usage or {})})


def error(
    status: int, message: str, type: str = "api_error", *, retry: bool | None = None
) -> ErrorReply:
    """Build an API error response, e.g. ``error(529, "Overloaded", "overloaded_error")``.

    Each retry by the CLI is a new request that consumes the next step.  Observed with
    CLI 2.1.330: 429 and 5xx are retried after about half a second unless
    ``retry=False`` (header ``x-should-retry: false``); a generic 400 is retried once
    with fewer beta headers whatever ``retry`` says.
    """
    if not 400 <= status <= 599:
        raise OptionsError(f"error status must be 4xx or 5xx, got {status}")
    return ErrorReply(status=status, message=message, type=type, retry=retry)


# --------------------------------------------------------------------------- wire format


def message_json(rep: Reply, *, model: str, message_id: str) -> dict[str, Any]:
    """The full (non-streaming) Message JSON for ``rep``."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [b.to_api() for b in rep.content],
        "stop_reason": rep.stop_reason,
        "stop_sequence": None,
        "usage": dict(rep.usage),
    }


def _pieces(value: str, count: int) -> list[str]:
    """Split ``value`` into ``count`` non-empty consecutive pieces (fewer if too short)."""
    if len(value) < 2:
        return [value]
    count = min(count, len(value))
    step = -(-len(value) // count)
    return [value[i : i + step] for i in range(0, len(value), step)]


def _block_events(index: int, block: Block) -> list[tuple[str, dict[str, Any]]]:
    start: dict[str, Any]
    deltas: list[dict[str, Any]]
    if isinstance(block, TextBlock):
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in _pieces(block.text, 2)]
    elif isinstance(block, ToolUseBlock):
        start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
        raw = json.dumps(dict(block.input))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in _pieces(raw, 3)]
    else:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _pieces(block.thinking, 2)]
        deltas.append({"type": "signature_delta", "signature": block.signature})
    events = [("content_block_start", {"index": index, "content_block": start})]
    events += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"index": index}))
    return [(name, {"type": name, **data}) for name, data in events]


def stream_events(rep: Reply, *, model: str, message_id: str) -> list[tuple[str, dict[str, Any]]]:
    """The server-sent events of a streamed ``rep``, as ``(event name, data)`` pairs."""
    usage = dict(rep.usage)
    start_usage = {**usage, "output_tokens": min(1, usage.get("output_tokens", 0))}
    message = {**message_json(rep, model=model, message_id=message_id), "content": []}
    message.update(stop_reason=None, usage=start_usage)
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(rep.content):
        events += _block_events(index, block)
    delta = {"stop_reason": rep.stop_reason, "stop_sequence": None}
    final_usage = {"output_tokens": usage.get("output_tokens", 0)}
    events.append(
        ("message_delta", {"type": "message_delta", "delta": delta, "usage": final_usage})
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def encode_event(name: str, data: Mapping[str, Any]) -> bytes:
    """One SSE frame: ``event: <name>\\ndata: <json>\\n\\n``."""
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


# --------------------------------------------------------------------------- request view


def _block_text(content: Any) -> list[str]:
    """The texts of a message or tool_result ``content`` (a string or a block list)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


@dataclass(frozen=True)
class ToolResult:
    """One ``tool_result`` block the CLI sent back.

    ``content`` is its text (text blocks joined with newlines) with the CLI's
    ``<system-reminder>`` sections removed and surrounding whitespace stripped;
    ``raw`` is the block exactly as sent.
    """

    tool_use_id: str
    content: str
    is_error: bool
    raw: Mapping[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    """A request the CLI made to the scripted model, as recorded by the server.

    ``headers`` keys are lower-case, with ``x-api-key``/``authorization`` redacted.
    ``body`` is the parsed JSON body (``{}`` when there is none).  ``kind`` says how the
    server classified it: ``"turn"`` (a main-loop request that consumed a script step),
    or a side request: ``"count_tokens"``, ``"probe"``, ``"structured"``, ``"side"`` or
    ``"other"`` (see `ScriptedModel`).
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]
    index: int = 0
    kind: str = "turn"

    @staticmethod
    def redact(headers: Mapping[str, str]) -> dict[str, str]:
        """Lower-case header names and hide credentials."""
        return {
            k.lower(): ("REDACTED" if k.lower() in _SECRET_HEADERS else v)
            for k, v in headers.items()
        }

    @property
    def route(self) -> str:
        """``path`` without its query string, e.g. ``/v1/messages``."""
        return self.path.split("?", 1)[0]

    @property
    def is_side_request(self) -> bool:
        """True for anything that did not consume a script step."""
        return self.kind != "turn"

    @property
    def model(self) -> str | None:
        """The model the CLI asked for."""
        value = self.body.get("model")
        return value if isinstance(value, str) else None

    @property
    def stream(self) -> bool:
        """Whether the CLI asked for a streamed (SSE) response."""
        return bool(self.body.get("stream"))

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tool definitions offered to the model."""
        tools = self.body.get("tools")
        return [t for t in tools if isinstance(t, dict)] if isinstance(tools, list) else []

    @property
    def tool_names(self) -> list[str]:
        """The names of the offered tools, in order."""
        return [str(t.get("name")) for t in self.tools]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent, oldest first."""
        msgs = self.body.get("messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    @property
    def system(self) -> str:
        """The top-level system prompt, its text blocks joined with blank lines."""
        return "\n\n".join(_block_text(self.body.get("system")))

    def _last_user(self) -> dict[str, Any] | None:
        return next((m for m in reversed(self.messages) if m.get("role") == "user"), None)

    def last_user_text(self) -> str:
        """Text of the last user message, without ``<system-reminder>`` sections."""
        message = self._last_user()
        if message is None:
            return ""
        parts = (_REMINDER.sub("", t).strip() for t in _block_text(message.get("content")))
        return "\n".join(p for p in parts if p)

    def tool_results(self) -> list[ToolResult]:
        """The ``tool_result`` blocks of the last user message, in the order sent."""
        message = self._last_user()
        content = message.get("content") if message else None
        if not isinstance(content, list):
            return []
        return [
            ToolResult(
                tool_use_id=str(b.get("tool_use_id", "")),
                content=_REMINDER.sub("", "\n".join(_block_text(b.get("content")))).strip(),
                is_error=bool(b.get("is_error", False)),
                raw=b,
            )
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]

    def summary(self) -> str:
        """A one-line description for error messages."""
        said = self.last_user_text().replace("\n", " ")
        said = said if len(said) <= 80 else said[:77] + "..."
        return f"{self.method} {self.path} model={self.model} last user text={said!r}"


# --------------------------------------------------------------------------- steps

StepResult: TypeAlias = Reply | ErrorReply | Block
"""What a step produces: a reply, an API error, or a bare block (a one-block reply)."""

Step: TypeAlias = StepResult | Callable[[ModelRequest], StepResult]
"""A script step: a fixed result, or a function that picks one from the request."""


def describe_step(step: Step) -> str:
    """A short description of a step, for error messages."""
    if not callable(step):
        text = repr(step)
    else:
        text = f"<callable {getattr(step, '__qualname__', repr(step))}>"
    return text if len(text) <= 160 else text[:157] + "..."


def schema_example(schema: Any) -> Any:
    """A minimal instance of a JSON schema (enough for the CLI's utility requests)."""
    if not isinstance(schema, dict):
        return "scripted"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else "string"
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        return {k: schema_example(v) for k, v in props.items()}
    return {"array": [], "number": 0, "integer": 0, "boolean": False, "null": None}.get(
        str(kind), "scripted"
    )
