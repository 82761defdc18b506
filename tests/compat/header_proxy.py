"""A loopback HTTP proxy that adds response headers, in front of `ScriptedModel`.

The CLI reports rate limits (``rate_limit_event``) from the ``anthropic-ratelimit-
unified-*`` headers of the Messages API's answers, for an account signed in with an
OAuth token. `ScriptedModel` sends no such headers; this proxy forwards each request
to it unchanged and adds ``headers`` to every answer, so the real CLI produces the
frame offline. Responses are read whole, then sent with a ``Content-Length``.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import urlsplit

_HOP_BY_HOP = frozenset({"connection", "content-length", "transfer-encoding", "keep-alive"})


class HeaderProxy:
    """Forward to ``target`` (a base URL), adding ``headers`` to every response."""

    def __init__(self, target: str, headers: Mapping[str, str]) -> None:
        parts = urlsplit(target)
        host, port, extra = parts.hostname or "127.0.0.1", parts.port or 80, dict(headers)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else None
                upstream = http.client.HTTPConnection(host, port, timeout=60)
                try:
                    sent = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                    upstream.request(self.command, self.path, body=body, headers=sent)
                    answer = upstream.getresponse()
                    data = answer.read()
                finally:
                    upstream.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP_BY_HOP:
                        self.send_header(name, value)
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_HEAD = _forward

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The proxy's base URL (for ``ANTHROPIC_BASE_URL``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> HeaderProxy:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
