"""Public objects report the public module they are imported from.

The implementation lives in private layers (``ccwire._wire.messages``...), but users
import from ``ccwire``; reprs, ``help()``, tracebacks and pickles should say so. Each
defining module calls `publish()` on its public classes and functions once, at import.
"""

from __future__ import annotations

__all__ = ["publish"]


def publish(*objects: object, module: str = "ccwire") -> None:
    """Make each object (class or function) report ``module`` as its ``__module__``.

    Args:
        *objects: The public classes and functions a module defines.
        module: The public module they are re-exported from.
    """
    for obj in objects:
        obj.__module__ = module
