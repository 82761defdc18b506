"""A scripted, offline stand-in for the Anthropic Messages API.

`ScriptedModel` is a small HTTP/1.1 server on a loopback address, run in a
background thread (so it works the same from sync, asyncio and trio code).  Point the
real ``claude`` CLI at it (see `offline_env()`) and every
main-loop request the CLI makes is answered by the next step of the test's script.

**What the CLI 2.1.330 sends** (observed by logging every request offline):

* With ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` (set by ``offline_env``): one
  streamed ``POST /v1/messages?beta=true`` per model turn, nothing else.  No
  ``/v1/models`` request and no quota check was ever seen.
* ``set_model``: a non-streamed probe, ``max_tokens: 1``, user text ``"Hi"``, no tools.
* ``get_context_usage``: a burst of 5 to 20 ``POST /v1/messages/count_tokens``.
* Only without that variable: ``HEAD /api/hello`` (connectivity check) and, when the
  entrypoint is an SDK, a streamed session-title request per prompt (no tools,
  ``output_config.format`` of type ``json_schema`` asking for ``{"title": ...}``)
  that races the real turn.

**Side-request rule.**  A request consumes a script step (a "turn") only if it is
``POST /v1/messages`` and neither a probe (``max_tokens <= 1``) nor a structured
utility request (``output_config.format`` set and no tools).  Everything else is a
side request with a canned answer: count_tokens ``{"input_tokens": len(json) // 4}``,
a probe the text ``"Hi"``, a structured request a minimal instance of its JSON schema
(``{"title": "scripted"}``), ``HEAD`` on any path ``200``, ``GET /v1/models`` a list
with `ScriptedModel.model`, anything else a 404 error.  Side replies report zero
usage, so the CLI's ``total_cost_usd`` counts scripted turns only.  Pass
``side_request=`` to replace the rule for ``POST /v1/messages`` (True means side).

**Errors as the CLI sees them.**  An exhausted script answers 500 with
``x-should-retry: false``: the CLI stops at once with an ``api_error`` result.  A
scripted 429/5xx without ``retry=False`` is retried after about half a second, and a
generic 400 is retried once with fewer beta headers; each retry consumes a step.

Every response carries ``Connection: close``; JSON has a ``Content-Length``, SSE is
sent with chunked transfer encoding, one chunk per event, flushed as it goes.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import secrets
import socket
import socketserver
import sys
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from http import HTTPStatus
from typing import Any

if sys.version_info >= (3, 11):  # typing's own: importing typing_extensions costs 2 ms
    from typing import Self
else:
    from typing_extensions import Self

from .._core.errors import OptionsError, SessionStateError
from ._env import offline_env
from ._replies import (
    ErrorReply,
    ModelRequest,
    Reply,
    Step,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    describe_step,
    encode_event,
    message_json,
    reply,
    schema_example,
    stream_events,
)

__all__ = ["DEFAULT_MODEL", "ScriptedModel"]

DEFAULT_MODEL = "claude-sonnet-4-5"
"""Default ``ScriptedModel(model=...)``.  The CLI prices usage by the model it asked for
(the reply's ``model`` field does not matter): $3/$15 per Mtok here, so a default turn
(100 in, 20 out) costs 0.0006 USD.  An unknown id such as ``claude-scripted-1`` is
priced too (``costBasis: "unknown"``) but makes the CLI print
``[claude-code:unrecognized_model]`` on stderr, hence a real id."""

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
_NO_USAGE = {"input_tokens": 0, "output_tokens": 0}  # side replies cost nothing


def _checked(steps: tuple[Any, ...]) -> tuple[Step, ...]:
    """``steps``, each a step: a list or a tuple (``ScriptedModel([a, b])``) was taken for
    one step and failed only when the CLI asked for it, as an API error 500."""
    for step in steps:
        if isinstance(step, (Reply, ErrorReply, TextBlock, ToolUseBlock, ThinkingBlock)):
            continue
        if isinstance(step, (list, tuple)):
            raise OptionsError(
                f"a ScriptedModel step cannot be a {type(step).__name__}: pass the steps one "
                "by one, one per model turn (`ScriptedModel(step1, step2)` or "
                "`ScriptedModel(*steps)`); several blocks in one turn are one step, "
                "`reply(block1, block2)`"
            )
        if not callable(step):
            raise OptionsError(
                f"a ScriptedModel step must be a reply, a block (text(), tool_use(), "
                f"thinking()), an error() or a function of the request, not {step!r}"
            )
    return steps


@dataclass
class _Response:
    status: int
    body: bytes | list[bytes] = b""  # a list means SSE: one chunk per event
    headers: tuple[tuple[str, str], ...] = ()


class ScriptedModel:
    """A local Messages API server whose replies are scripted by the test.

    ``steps`` are consumed in order, one per main-loop request ("turn"); `add()`
    appends more.  A step is a `Reply`, a bare block, an `ErrorReply`, or a
    callable ``(ModelRequest) -> any of those`` (called in the server thread, so it may
    block, e.g. on an event, to hold a reply back).  When the script is exhausted the
    ``default`` step answers; without one the server answers HTTP 500 (with
    ``x-should-retry: false``, so the CLI gives up at once) and records the failure in
    `errors`.  Side requests never consume steps (rule in the module docstring).

    ``model`` is the model id `env()` pins the CLI to (``ANTHROPIC_MODEL``) and the
    one reported when a request names none; replies echo the requested model, like the
    real API.  ``host`` must be a loopback address: the server has no authentication.

    Example:
        ```python
        with ScriptedModel(
            tool_use("mcp__orders__lookup_order", {"order_id": "A-1"}),
            text("It shipped on Monday."),
        ) as model:
            options = ClaudeAgentOptions(env=model.env(tmp_path / "home"))
            async for message in query(prompt="Where is A-1?", options=options):
                ...
        ```

    In pytest, the plugin's ``scripted_model`` and ``offline_env`` fixtures do this.
    """

    def __init__(
        self,
        *steps: Step,
        model: str = DEFAULT_MODEL,
        default: Step | None = None,
        side_request: Callable[[ModelRequest], bool] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        if host not in _LOOPBACK_HOSTS and not host.startswith("127."):
            raise ValueError(f"ScriptedModel only listens on loopback addresses, not {host!r}")
        self.model = model
        self.default = default
        self.side_request = side_request
        self._address = (host, port)
        self._lock = threading.Condition()
        self._steps: collections.deque[Step] = collections.deque(_checked(steps))
        self._served = 0
        self._requests: list[ModelRequest] = []
        self._errors: list[str] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._bound: tuple[str, int] | None = None

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> Self:
        """Bind the socket and serve in a daemon thread; returns ``self``."""
        if self._server is not None or self._bound is not None:
            raise SessionStateError("ScriptedModel.start() may only be called once")
        server = _Server(self._address, self)
        self._server = server
        host, port = server.server_address[:2]
        self._bound = (str(host), int(port))
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ScriptedModel:{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Self:
        """Start the server."""
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        """Stop the server."""
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._bound is None:
            raise SessionStateError(
                "ScriptedModel is not started: use `with ScriptedModel(...) as model:` "
                "(or call model.start() first)"
            )
        return self._bound[1]

    @property
    def url(self) -> str:
        """The base URL for ``ANTHROPIC_BASE_URL``, e.g. ``http://127.0.0.1:40123``."""
        host = self._bound[0] if self._bound else ""
        return f"http://{'[' + host + ']' if ':' in host else host}:{self.port}"

    def env(
        self, home: str | os.PathLike[str], *, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """Shortcut for `offline_env()` with this model.

        Args:
            home: The CLI's ``HOME``: a fresh, empty folder (``tmp_path / "home"``), so
                no user settings, login or sessions leak into the run.
            extra: More variables, applied last.

        Returns:
            The variables for ``ClaudeAgentOptions(env=...)``.
        """
        return offline_env(self, home=home, extra=extra)

    # ----------------------------------------------------------------- script

    def add(self, *steps: Step) -> None:
        """Append steps to the script (thread-safe)."""
        checked = _checked(steps)
        with self._lock:
            self._steps.extend(checked)

    @property
    def remaining(self) -> int:
        """How many scripted steps have not been consumed yet."""
        with self._lock:
            return len(self._steps)

    @property
    def requests(self) -> list[ModelRequest]:
        """Every request received so far, side requests included (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def turn_requests(self) -> list[ModelRequest]:
        """Only the main-loop requests, i.e. those that consumed a step."""
        with self._lock:
            return self._turns()

    def _turns(self) -> list[ModelRequest]:
        return [r for r in self._requests if not r.is_side_request]

    @property
    def errors(self) -> list[str]:
        """Failures seen while serving (script exhausted, a step raised...)."""
        with self._lock:
            return list(self._errors)

    def wait_for_turns(self, count: int, timeout: float = 10.0) -> list[ModelRequest]:
        """Block until ``count`` turn requests have arrived (replies may still be in flight).

        Returns every turn request so far; raises `TimeoutError` if fewer than
        ``count`` arrived within ``timeout`` seconds.
        """
        with self._lock:
            ok = self._lock.wait_for(lambda: len(self._turns()) >= count, timeout)
            if not ok:
                raise TimeoutError(f"saw {len(self._turns())} of {count} turn requests")
            return self._turns()

    def assert_script_consumed(self) -> None:
        """Raise `AssertionError` if steps are left over or any error occurred."""
        with self._lock:
            left = [describe_step(s) for s in self._steps]
            errors = list(self._errors)
        problems = [f"unconsumed step: {s}" for s in left] + [f"error: {e}" for e in errors]
        if problems:
            raise AssertionError(
                "ScriptedModel script not cleanly consumed:\n  " + "\n  ".join(problems)
            )

    # ----------------------------------------------------------------- serving

    def _classify(self, request: ModelRequest) -> str:
        body = request.body
        if request.method == "POST" and request.route == "/v1/messages/count_tokens":
            return "count_tokens"
        if request.method != "POST" or request.route != "/v1/messages":
            return "other"
        if self.side_request is not None:
            return "side" if self.side_request(request) else "turn"
        max_tokens = body.get("max_tokens")
        if isinstance(max_tokens, int) and max_tokens <= 1:
            return "probe"
        config = body.get("output_config")
        if isinstance(config, dict) and config.get("format") and not request.tools:
            return "structured"
        return "turn"

    def _record(self, request: ModelRequest) -> ModelRequest:
        with self._lock:
            request = replace(request, index=len(self._requests))
            self._requests.append(request)
            self._lock.notify_all()
            return request

    def _fail(self, message: str) -> _Response:
        with self._lock:
            self._errors.append(message)
        return _error_response(ErrorReply(500, message, "api_error", retry=False))

    def _respond(self, request: ModelRequest) -> _Response:
        try:
            kind = self._classify(request)
        except Exception as exc:
            self._record(replace(request, kind="side"))
            return self._fail(f"ScriptedModel: side_request hook raised {exc!r}")
        request = self._record(replace(request, kind=kind))
        if kind == "turn":
            return self._turn(request)
        return self._side(request)

    def _turn(self, request: ModelRequest) -> _Response:
        with self._lock:
            if self._steps:
                step: Step | None = self._steps.popleft()
                self._served += 1
            else:
                step = self.default
                served = self._served
        if step is None:
            return self._fail(
                f"ScriptedModel: script exhausted after {served} replies; "
                f"last request: {request.summary()}"
            )
        try:
            result = step if not callable(step) else step(request)
            if isinstance(result, (TextBlock, ToolUseBlock, ThinkingBlock)):
                result = reply(result)
            if not isinstance(result, (Reply, ErrorReply)):
                return self._fail(f"ScriptedModel: step {describe_step(step)} gave {result!r}")
        except Exception as exc:
            return self._fail(f"ScriptedModel: step {describe_step(step)} failed: {exc!r}")
        if isinstance(result, ErrorReply):
            return _error_response(result)
        return self._message(request, result)

    def _side(self, request: ModelRequest) -> _Response:
        body = request.body
        if request.kind == "count_tokens":
            size = json.dumps([body.get("system"), body.get("messages"), body.get("tools")])
            return _json_response(200, {"input_tokens": max(1, len(size) // 4)})
        if request.kind == "other":
            if request.method == "HEAD":
                return _Response(200)
            if request.method == "GET" and request.route == "/v1/models":
                entry = {"type": "model", "id": self.model, "display_name": self.model}
                return _json_response(200, {"data": [entry], "has_more": False})
            message = f"ScriptedModel: no route {request.method} {request.route}"
            return _error_response(ErrorReply(404, message, "not_found_error"))
        if request.kind == "structured":
            fmt = body["output_config"]["format"]
            answer = json.dumps(schema_example(fmt.get("schema") if isinstance(fmt, dict) else {}))
            return self._message(request, reply(TextBlock(answer), usage=_NO_USAGE))
        stop = "max_tokens" if request.kind == "probe" else "end_turn"
        return self._message(request, reply(TextBlock("Hi"), stop_reason=stop, usage=_NO_USAGE))

    def _message(self, request: ModelRequest, rep: Reply) -> _Response:
        model = request.model or self.model
        message_id = "msg_" + secrets.token_hex(12)
        if not request.stream:
            return _json_response(200, message_json(rep, model=model, message_id=message_id))
        events = stream_events(rep, model=model, message_id=message_id)
        return _Response(200, [encode_event(name, data) for name, data in events])


def _json_response(
    status: int, payload: Any, headers: tuple[tuple[str, str], ...] = ()
) -> _Response:
    return _Response(status, json.dumps(payload).encode(), headers)


def _error_response(err: ErrorReply) -> _Response:
    headers = () if err.retry is None else (("x-should-retry", str(err.retry).lower()),)
    return _json_response(err.status, err.to_api(), headers)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False
    # many CLIs (concurrent sessions) connect at once; the default backlog of 5 would
    # reset connections past it
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], owner: ScriptedModel) -> None:
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record instead of printing a traceback to stderr."""
        with self.owner._lock:
            self.owner._errors.append(f"ScriptedModel: connection from {client_address} failed")


class _Handler(socketserver.StreamRequestHandler):
    server: _Server
    timeout = 30

    def handle(self) -> None:
        try:
            incoming = _read_request(self.rfile, self.wfile)
        except (ValueError, OSError):
            return
        if incoming is None:
            return
        method, path, headers, raw = incoming
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {"_": body}
        request = ModelRequest(method, path, ModelRequest.redact(headers), body)
        response = self.server.owner._respond(request)
        with contextlib.suppress(OSError):  # the CLI went away (e.g. an interrupt)
            _write_response(self.wfile, response, head=method == "HEAD")


# --------------------------------------------------------------------------- HTTP/1.1


_MAX_LINE = 65536


def _read_request(rfile: Any, wfile: Any) -> tuple[str, str, dict[str, str], bytes] | None:
    """Read one request: ``(method, target, headers, body)``; None on a closed socket."""
    line = rfile.readline(_MAX_LINE)
    if not line.strip():
        return None
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise ValueError(f"not an HTTP/1.x request line: {line!r}")
    headers: dict[str, str] = {}
    while (raw := rfile.readline(_MAX_LINE)) not in (b"\r\n", b"\n", b""):
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip()] = value.strip()
    lower = {k.lower(): v for k, v in headers.items()}
    if lower.get("expect", "").lower() == "100-continue":
        wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        wfile.flush()
    if "chunked" in lower.get("transfer-encoding", "").lower():
        body = bytearray()
        while size := int(rfile.readline(_MAX_LINE).split(b";")[0].strip() or b"0", 16):
            body += rfile.read(size)
            rfile.readline(_MAX_LINE)
        while rfile.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return parts[0], parts[1], headers, bytes(body)
    return parts[0], parts[1], headers, rfile.read(int(lower.get("content-length") or 0))


def _write_response(wfile: Any, response: _Response, *, head: bool) -> None:
    """Write ``response`` (JSON with a length, or SSE chunked) and end with close."""
    status = response.status
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Error"
    sse = isinstance(response.body, list)
    lines = [
        f"HTTP/1.1 {status} {reason}",
        f"content-type: {'text/event-stream' if sse else 'application/json'}",
        "transfer-encoding: chunked" if sse else f"content-length: {len(response.body)}",
        f"request-id: req_{secrets.token_hex(12)}",
        *(f"{k}: {v}" for k, v in response.headers),
        "connection: close",
    ]
    wfile.write("\r\n".join([*lines, "", ""]).encode("latin-1"))
    if isinstance(response.body, list) and not head:
        for chunk in response.body:  # one event per chunk, each sent as soon as written
            wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            wfile.flush()
        wfile.write(b"0\r\n\r\n")
    elif not head:
        wfile.write(response.body)
    wfile.flush()
