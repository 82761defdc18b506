"""Hook callbacks: registration ids for ``initialize`` and answering ``hook_callback``."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from . import _codec as codec
from ._control import IncomingCall, RouteHandler
from ._errors import ControlProtocolError
from ._hook_types import HookCallback, HookContext, HookEvent, HookMatcher

__all__ = ["DEFAULT_HOOK_TIMEOUT", "HookRegistry"]

DEFAULT_HOOK_TIMEOUT = 60.0
"""Seconds a hook callback may run when its matcher sets no timeout (the CLI's default)."""


@dataclass(frozen=True)
class _Registered:
    event: str
    callback: HookCallback
    timeout: float


class HookRegistry:
    """Assigns ``hook_<n>`` ids to callbacks and routes ``hook_callback`` requests to them."""

    def __init__(self, hooks: Mapping[HookEvent, Sequence[HookMatcher]] | None) -> None:
        self._by_id: dict[str, _Registered] = {}
        self._config: dict[str, list[dict[str, Any]]] = {}
        counter = 0
        for event, matchers in (hooks or {}).items():
            entries: list[tuple[str | None, list[str], float | None]] = []
            for matcher in matchers:
                ids = []
                for callback in matcher.hooks:
                    if not callable(callback):
                        raise TypeError(f"hook for {event} is not callable: {callback!r}")
                    cid = f"hook_{counter}"
                    counter += 1
                    timeout = (
                        matcher.timeout if matcher.timeout is not None else DEFAULT_HOOK_TIMEOUT
                    )
                    self._by_id[cid] = _Registered(event, callback, timeout)
                    ids.append(cid)
                if ids:
                    entries.append((matcher.matcher, ids, matcher.timeout))
            if entries:
                self._config[event] = codec.encode_hook_matchers(entries)

    @property
    def initialize_config(self) -> dict[str, list[dict[str, Any]]] | None:
        """The ``hooks`` field of ``initialize`` (None when there are no hooks)."""
        return self._config or None

    def route(self) -> RouteHandler:
        """The route handler for ``hook_callback`` requests."""

        async def handle(req: codec.ControlRequest, call: IncomingCall) -> Mapping[str, Any]:
            decoded = codec.decode_hook_callback(req.request)
            reg = self._by_id.get(decoded.callback_id)
            if reg is None:
                raise ControlProtocolError(
                    f"no hook callback registered as {decoded.callback_id!r}", subtype=req.subtype
                )
            context = HookContext(signal=call.cancelled)
            output: Any = None
            with anyio.move_on_after(reg.timeout) as scope:
                produced: Any = reg.callback(decoded.input, decoded.tool_use_id, context)
                output = await produced if inspect.isawaitable(produced) else produced
            if scope.cancelled_caught:
                raise ControlProtocolError(
                    f"{reg.event} hook timed out after {reg.timeout:g} s", subtype=req.subtype
                )
            if output is None:
                output = {}
            if not isinstance(output, Mapping):
                raise ControlProtocolError(
                    f"{reg.event} hook returned {type(output).__name__}; expected a dict",
                    subtype=req.subtype,
                )
            return codec.encode_hook_output(output)

        return handle
