"""`leaves()`: the exceptions inside an exception group (from a task group)."""

from __future__ import annotations

__all__ = ["leaves"]


def leaves(exc: BaseException) -> list[BaseException]:
    """``exc`` itself, or, for an exception group, the exceptions inside it at any
    depth, in order."""
    inner = getattr(exc, "exceptions", None)  # an exception group (no name for it on 3.10)
    if isinstance(inner, tuple) and inner and all(isinstance(e, BaseException) for e in inner):
        return [leaf for sub in inner for leaf in leaves(sub)]
    return [exc]
