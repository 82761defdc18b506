"""The audit log: one JSON line per tool call, permission decision and hook decision.

`AuditLog` watches a connection's incoming control requests (the CLI asking us to
run an in-process tool, to decide a permission, or to run a hook) and writes, when each
one finishes, a record saying *who* decided or ran it, *what* it was about, the
*arguments* (after redaction), the *outcome* and how long it took. Set it as
``ClaudeAgentOptions(audit_log=AuditLog("audit.jsonl"))``; one log may serve many
sessions at once.

Arguments pass through a redaction hook before they are written. The default one,
`redact_secrets()`, masks the values of keys whose name looks secret
(``password``, ``x-api-key``, ``clientSecret``, ``aws_secret_access_key``...) at any
depth, and secret-shaped values anywhere (``sk-ant-...``, ``ghp_...``, ``AKIA...``,
JWTs, URL passwords, ``?token=``); the ``detail`` text is masked by shape too. Pass
your own callable (`redact_keys()` masks exact names only), or ``redact=None`` to log
arguments and details verbatim.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import IO, Any, Final

from .._core.redact import redact_text, redact_value
from .._protocol.control import ControlEvent
from .._wire import codec

__all__ = [
    "DEFAULT_SECRET_KEYS",
    "AuditLog",
    "AuditRecord",
    "Redactor",
    "redact_keys",
    "redact_secrets",
]

logger = logging.getLogger("ccwire")

AuditRecord = dict[str, Any]
"""One audit entry: ``ts``, ``kind``, ``who``, ``what``, ``arguments``, ``outcome``,
``detail``, ``duration_ms``, ``request_id``, ``tool_use_id`` (see `AuditLog`)."""

Redactor = Callable[[str, Any], Any]
"""``redact(what, arguments) -> arguments to write``; ``what`` names the tool or hook."""

DEFAULT_SECRET_KEYS: Final = frozenset(
    {
        "password", "passwd", "secret", "token", "access_token", "refresh_token", "api_key",
        "apikey", "authorization", "auth", "cookie", "private_key", "client_secret",
        "credentials", "session_token",
    }
)  # fmt: skip
"""Key names (compared case-insensitively, ``-`` read as ``_``) masked by default."""

MASK: Final = "***"
_DETAIL_CHARS: Final = 500


def redact_keys(keys: Iterable[str] = DEFAULT_SECRET_KEYS, *, mask: str = MASK) -> Redactor:
    """A redactor that replaces the value of every key named in ``keys``, at any depth.

    Names are compared case-insensitively with ``-`` read as ``_``; values that are
    dicts or lists are walked, everything else is kept.
    """
    wanted = frozenset(k.lower().replace("-", "_") for k in keys)

    def walk(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {
                k: mask if str(k).lower().replace("-", "_") in wanted else walk(v)
                for k, v in value.items()
            }
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    def redact(what: str, arguments: Any) -> Any:
        return walk(arguments)

    return redact


def redact_secrets(extra_keys: Iterable[str] = (), *, mask: str = MASK) -> Redactor:
    """The default redactor: secrets masked by key name and by value shape.

    A value under a key whose name looks secret (its words include ``password``,
    ``pwd``, ``secret``, ``token``, ``bearer``, ``cookie``..., or ``api key``,
    ``private key``...) is masked whole, at any depth; strings anywhere have their
    secret-shaped parts masked (``sk-ant-...``, ``ghp_...``, ``AKIA...``, JWTs,
    ``https://user:***@``, ``?token=...``, ``password=...``). ``max_tokens`` and the
    like are kept: names are compared word by word.

    Args:
        extra_keys: more key names to mask (compared case-insensitively, ``-`` as ``_``).
        mask: the replacement.

    Returns:
        A `Redactor`.
    """
    extra = frozenset(k.lower().replace("-", "_") for k in extra_keys)

    def walk(value: Any) -> Any:
        if extra and isinstance(value, Mapping):
            return {
                k: mask if str(k).lower().replace("-", "_") in extra else walk(v)
                for k, v in value.items()
            }
        if extra and isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return redact_value(value, mask=mask)

    def redact(what: str, arguments: Any) -> Any:
        return walk(arguments)

    return redact


_DEFAULT_REDACTOR: Final = redact_secrets()


class AuditLog:
    """Write one JSON line per tool call, permission decision and hook decision.

    ``target`` is a file path (opened for appending, created if missing) or a text
    file-like object (written and flushed per record; not closed by `close()`).
    ``redact`` rewrites the arguments of each record before it is written (default:
    `redact_secrets()`, which masks by key name and value shape; ``None``: write them,
    and the ``detail`` text, as they are). A failure to write is
    logged on the ``ccwire`` logger and never disturbs the session.

    Each record is an object with these keys:

    * ``ts``: finish time, ISO 8601 UTC; ``duration_ms``: time from request to answer;
    * ``kind``: ``"tool_call"``, ``"permission"`` or ``"hook"``;
    * ``who``: what answered: ``"mcp:<server>/<tool>"``, ``"can_use_tool"`` or
      ``"hook:<callback id>"``;
    * ``what``: the tool name (for hooks: ``"<event>"`` or ``"<event>:<tool>"``);
    * ``arguments``: the tool's arguments / the tool input asked about (redacted);
    * ``outcome``: tool calls ``"ok"``, ``"error"`` (an ``isError`` result) or
      ``"failed"`` (no result); permissions ``"allow"``, ``"deny"`` or ``"error"``; hooks
      the decision they returned (``"allow"``, ``"deny"``, ``"ask"``, ``"block"``,
      ``"stop"``) or ``"ok"`` / ``"error"``; any request withdrawn by the CLI or cut off
      by the end of the connection is ``"cancelled"``;
    * ``detail``: the error text, deny message or hook reason, when there is one;
    * ``request_id``, ``tool_use_id``: correlation ids.

    Only ``tools/call`` is recorded from the MCP traffic (not ``tools/list`` and the like).
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        redact: Redactor | None = _DEFAULT_REDACTOR,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._redact = redact
        self._clock = clock
        self._started: dict[str, float] = {}
        self._lock = threading.Lock()
        self._own = not hasattr(target, "write")
        self._path = None if hasattr(target, "write") else os.fspath(target)
        self._file: IO[str] | None = None if self._own else target  # type: ignore[assignment]
        self.records_written = 0
        """How many records were written so far."""

    def __repr__(self) -> str:
        where = self._path if self._path is not None else type(self._file).__name__
        return f"AuditLog({where!r})"

    # ---------------------------------------------------------------- wiring

    def attach(self, connection: Any) -> Callable[[], None]:
        """Watch ``connection`` (a `Connection` or a control
        protocol); returns a function that stops watching."""
        add = getattr(connection, "add_control_observer", None) or connection.add_observer
        remove: Callable[[], None] = add(self.observe)
        return remove

    def observe(self, event: ControlEvent) -> None:
        """The control observer: remember starts, write a record for each finish."""
        key = event.request_id
        if event.outcome is None:
            self._started[key] = self._clock()
            return
        started = self._started.pop(key, None)
        record = self.record_for(event)
        if record is None:
            return
        if started is not None:
            record["duration_ms"] = round((self._clock() - started) * 1000, 3)
        self.write(record)

    # ---------------------------------------------------------------- records

    def record_for(self, event: ControlEvent) -> AuditRecord | None:
        """The record for a finished request, or ``None`` if it is not audited."""
        req = event.request
        if event.subtype == codec.MCP_MESSAGE:
            return self._tool_call(event, req)
        if event.subtype == codec.CAN_USE_TOOL:
            name = str(req.get("tool_name", ""))
            outcome, detail = _permission_outcome(event)
            return self._record(
                event, "permission", "can_use_tool", name, req.get("input"), outcome, detail,
                req.get("tool_use_id"),
            )  # fmt: skip
        if event.subtype == codec.HOOK_CALLBACK:
            inp = req.get("input")
            inp = inp if isinstance(inp, Mapping) else {}
            hook_event = str(inp.get("hook_event_name", ""))
            tool_name = inp.get("tool_name")
            what = f"{hook_event}:{tool_name}" if isinstance(tool_name, str) else hook_event
            outcome, detail = _hook_outcome(event)
            return self._record(
                event, "hook", f"hook:{req.get('callback_id', '')}", what,
                inp.get("tool_input"), outcome, detail, req.get("tool_use_id"),
            )  # fmt: skip
        return None

    def _tool_call(self, event: ControlEvent, req: Mapping[str, Any]) -> AuditRecord | None:
        message = req.get("message")
        if not isinstance(message, Mapping) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        params = params if isinstance(params, Mapping) else {}
        name = str(params.get("name", ""))
        meta = params.get("_meta")
        tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, Mapping) else None
        outcome, detail = _tool_outcome(event)
        who = f"mcp:{req.get('server_name', '')}/{name}"
        return self._record(
            event, "tool_call", who, name, params.get("arguments"), outcome, detail, tool_use_id
        )

    def _record(
        self,
        event: ControlEvent,
        kind: str,
        who: str,
        what: str,
        arguments: Any,
        outcome: str,
        detail: str | None,
        tool_use_id: Any,
    ) -> AuditRecord:
        if self._redact is not None:
            try:
                arguments = self._redact(what, arguments)
            except Exception:  # never write unredacted arguments
                logger.exception("ccwire: the audit redactor raised; arguments withheld")
                arguments = MASK
        return {
            "ts": _now(),
            "kind": kind,
            "who": who,
            "what": what,
            "arguments": arguments,
            "outcome": outcome,
            "detail": None if detail is None else self._detail(detail),
            "duration_ms": None,
            "request_id": event.request_id,
            "tool_use_id": tool_use_id if isinstance(tool_use_id, str) else None,
        }

    def _detail(self, detail: str) -> str:
        return (
            redact_text(detail)[:_DETAIL_CHARS]
            if self._redact is not None
            else detail[:_DETAIL_CHARS]
        )

    # ---------------------------------------------------------------- output

    def write(self, record: AuditRecord) -> None:
        """Append one record as a JSON line (never raises)."""
        try:
            line = json.dumps(record, ensure_ascii=False, default=repr) + "\n"
            with self._lock:
                if self._file is None:
                    assert self._path is not None
                    self._file = open(self._path, "a", encoding="utf-8")  # noqa: SIM115
                self._file.write(line)
                self._file.flush()
                self.records_written += 1
        except Exception:
            logger.exception("ccwire: could not write the audit log")

    def close(self) -> None:
        """Close the file this log opened (a given file object stays open)."""
        with self._lock:
            if self._own and self._file is not None:
                self._file.close()
                self._file = None


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


def _tool_outcome(event: ControlEvent) -> tuple[str, str | None]:
    if event.outcome != "ok":
        return ("cancelled", None) if event.outcome == "cancelled" else ("failed", event.detail)
    reply = (event.response or {}).get("mcp_response")
    if not isinstance(reply, Mapping):
        return "failed", "no MCP response"
    error = reply.get("error")
    if isinstance(error, Mapping):
        return "failed", str(error.get("message", ""))
    result = reply.get("result")
    if not isinstance(result, Mapping):
        return "failed", "no result"
    if result.get("isError"):
        return "error", _first_text(result.get("content"))
    return "ok", None


def _first_text(content: Any) -> str | None:
    if isinstance(content, list):
        for block in content:
            if isinstance(block, Mapping) and isinstance(block.get("text"), str):
                return str(block["text"])
    return None


def _permission_outcome(event: ControlEvent) -> tuple[str, str | None]:
    if event.outcome != "ok":
        return ("cancelled", None) if event.outcome == "cancelled" else ("error", event.detail)
    body = event.response or {}
    behavior = body.get("behavior")
    if behavior == "allow":
        return "allow", None
    if behavior == "deny":
        message = body.get("message")
        return "deny", message if isinstance(message, str) else None
    return "error", f"unexpected answer {behavior!r}"


def _hook_outcome(event: ControlEvent) -> tuple[str, str | None]:
    if event.outcome != "ok":
        return ("cancelled", None) if event.outcome == "cancelled" else ("error", event.detail)
    body = event.response or {}
    specific = body.get("hookSpecificOutput")
    reason = body.get("reason") or body.get("stopReason")
    if isinstance(specific, Mapping):
        decision = specific.get("permissionDecision")
        if isinstance(decision, str):
            why = specific.get("permissionDecisionReason") or reason
            return decision, why if isinstance(why, str) else None
        answer = specific.get("decision")  # PermissionRequest: {"behavior": ..., "message"}
        if isinstance(answer, Mapping) and isinstance(answer.get("behavior"), str):
            why = answer.get("message") or reason
            return answer["behavior"], why if isinstance(why, str) else None
    decision = body.get("decision")
    if isinstance(decision, str):
        return decision, reason if isinstance(reason, str) else None
    if body.get("continue") is False:
        return "stop", reason if isinstance(reason, str) else None
    return "ok", None
