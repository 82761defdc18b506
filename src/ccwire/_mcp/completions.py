"""Argument completion: ``completion/complete`` for prompt arguments and URI-template variables.

A prompt (``@prompt(..., complete={...})``) or a resource template
(``@resource(..., complete={...})``) maps argument (variable) names to completers.
A completer is either a list of values (those starting with what the user typed so
far are offered, case-insensitively), or a function ``(value, context)`` (``async
def`` or plain ``def``) returning the values to offer: ``value`` is the partial
argument, ``context`` the arguments already given (``{name: value}``).  At most 100
values are sent; ``hasMore`` says when there were more.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Final, Union

from .._core.errors import McpError, ToolDefinitionError
from .._wire.jsonrpc import INVALID_PARAMS

__all__ = ["Completer", "Completers", "check_completers", "complete"]

Completer = Union[
    Iterable[str],
    Callable[[str, Mapping[str, str]], Union[Iterable[str], Awaitable[Iterable[str]]]],
]
"""Values to offer, or a function ``(value, context) -> values`` (sync or async)."""
Completers = Mapping[str, Completer]

_MAX_VALUES: Final = 100


def check_completers(complete: Any, names: Iterable[str], what: str) -> dict[str, Completer]:
    """``complete`` checked at definition time: a mapping from known argument names to
    lists of strings or callables."""
    if complete is None:
        return {}
    if not isinstance(complete, Mapping):
        raise ToolDefinitionError(f"{what}: complete must map argument names to completers")
    known = set(names)
    out: dict[str, Completer] = {}
    for name, completer in complete.items():
        if name not in known:
            raise ToolDefinitionError(f"{what}: cannot complete unknown argument {name!r}")
        if callable(completer):
            out[name] = completer
        elif isinstance(completer, Iterable) and not isinstance(completer, (str, bytes)):
            values = list(completer)
            if not all(isinstance(v, str) for v in values):
                raise ToolDefinitionError(f"{what}: completions of {name!r} must be strings")
            out[name] = tuple(values)
        else:
            raise ToolDefinitionError(f"{what}: bad completer for {name!r}: {completer!r}")
    return out


async def complete(
    completers: Mapping[str, Completer], params: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``completion/complete`` result for ``params`` (argument and context)."""
    argument = params.get("argument")
    if not isinstance(argument, Mapping) or not isinstance(argument.get("name"), str):
        raise McpError("Invalid params: argument must be {name, value}", code=INVALID_PARAMS)
    value = argument.get("value", "")
    if not isinstance(value, str):
        raise McpError("Invalid params: argument value must be a string", code=INVALID_PARAMS)
    context = params.get("context")
    given = context.get("arguments") if isinstance(context, Mapping) else None
    given = {str(k): str(v) for k, v in given.items()} if isinstance(given, Mapping) else {}
    completer = completers.get(argument["name"])
    if completer is None:
        values: list[str] = []
    elif callable(completer):
        produced = completer(value, given)
        if inspect.isawaitable(produced):
            produced = await produced
        values = [str(v) for v in produced]
    else:
        low = value.lower()
        values = [v for v in completer if v.lower().startswith(low)]
    result: dict[str, Any] = {"values": values[:_MAX_VALUES], "total": len(values)}
    result["hasMore"] = len(values) > _MAX_VALUES
    return {"completion": result}
