"""Reading user handlers once, at definition time: signature, parameters, sync or async.

Tools, resources and prompts all accept ``async def`` and plain ``def`` handlers.  A
plain one runs in a worker thread so it never blocks the event loop, within a thread
budget of its own (`ThreadBudget`), so that a stuck handler can't take the threads of
the others; what to call and how is decided here once, so that serving a request does
no introspection.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any, Final

from .._core.errors import ToolDefinitionError
from .threads import DEFAULT_THREAD_BUDGET, ThreadBudget

__all__ = [
    "as_async",
    "is_async",
    "kwargs_fields",
    "read_signature",
    "str_converter",
]

P = inspect.Parameter
_TRUE: Final = frozenset({"true", "1", "yes", "on"})
_FALSE: Final = frozenset({"false", "0", "no", "off"})


def read_signature(
    handler: Callable[..., Any], *, what: str, need_annotations: bool
) -> inspect.Signature | None:
    """The handler's signature with string annotations resolved, or ``None`` if it has none.

    When the annotations are needed (a schema is inferred from them) a failure to
    resolve them raises `ToolDefinitionError` naming ``what``;
    otherwise the unresolved signature is used.
    """
    try:
        return inspect.signature(handler, eval_str=True)
    except (TypeError, ValueError):
        return None  # builtins and the like
    except Exception as exc:
        if need_annotations:
            raise ToolDefinitionError(f"{what}: cannot read its annotations: {exc}") from exc
        return inspect.signature(handler)


def kwargs_fields(
    params: list[inspect.Parameter], *, what: str, skip: tuple[inspect.Parameter, ...] = ()
) -> tuple[list[tuple[str, Any, bool]], bool]:
    """``([(name, annotation, has_default)], accepts **kwargs)`` for keyword-called handlers."""
    fields: list[tuple[str, Any, bool]] = []
    extra = False
    for p in params:
        if p in skip:
            continue
        if p.kind in (P.POSITIONAL_ONLY, P.VAR_POSITIONAL):
            raise ToolDefinitionError(f"{what}: cannot pass arguments to *{p.name}")
        if p.kind is P.VAR_KEYWORD:
            extra = True
        else:
            fields.append((p.name, p.annotation, p.default is not P.empty))
    return fields, extra


def is_async(handler: Any) -> bool:
    """True for coroutine functions and objects whose ``__call__`` is one."""
    dunder_call = getattr(type(handler), "__call__", None)  # noqa: B004
    return inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(dunder_call)


def as_async(
    call: Callable[..., Any], handler: Callable[..., Any], *, threads: int | None = None
) -> Callable[..., Awaitable[Any]]:
    """``call`` itself when ``handler`` is async, else a coroutine running it in a thread.

    The threads come from a `ThreadBudget` of this handler alone (``threads`` of them,
    default `DEFAULT_THREAD_BUDGET`), never from the event loop's shared pool. A
    cancelled or timed-out call answers at once; the thread itself cannot be
    interrupted and finishes in the background, counted against the budget until it
    returns.  A sync handler that returns an awaitable has it awaited on the event loop.
    The budget is the wrapper's ``thread_budget`` attribute.
    """
    if is_async(handler):
        return call
    name = getattr(handler, "__qualname__", None) or repr(handler)
    budget = ThreadBudget(threads or DEFAULT_THREAD_BUDGET, what=str(name))

    def boxed(*args: Any) -> tuple[Any]:  # trio's worker threads refuse to return a coroutine
        return (call(*args),)

    async def in_thread(*args: Any) -> Any:
        (result,) = await budget.run(boxed, *args)
        return await result if inspect.isawaitable(result) else result

    in_thread.thread_budget = budget  # type: ignore[attr-defined]
    return in_thread


def _to_bool(text: str) -> bool:
    low = text.strip().lower()
    if low in _TRUE or low in _FALSE:
        return low in _TRUE
    raise ValueError(f"not a boolean: {text!r}")


def str_converter(annotation: Any) -> Callable[[str], Any] | None:
    """How to turn a string (a URI-template variable, a prompt argument) into the type a
    handler parameter is annotated with: ``int``, ``float``, ``bool``, possibly inside
    ``Optional``/``Annotated``.  ``None`` means: pass the string as it is.
    """
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return str_converter(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        kinds = [a for a in typing.get_args(annotation) if a is not type(None)]
        return str_converter(kinds[0]) if len(kinds) == 1 else None
    if annotation is bool:
        return _to_bool
    if annotation is int or annotation is float:
        return annotation
    return None
