"""Public objects report the public module they are imported from.

The implementation lives in private layers (``ccwire._wire.messages``...), but users
import from ``ccwire``; reprs, ``help()``, tracebacks and pickles should say so. Each
module that a public package imports public classes or functions from ends with
``publish_module(__name__)``, which gives them the ``__module__`` of that package. What
is public, and from where, is read from the public packages' own ``__init__`` (their
imports and ``__all__``), so nothing here can drift from it.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from functools import cache

from .lazy import package_init

__all__ = ["publish_module"]

_ALL = re.compile(r"^__all__[ \t]*=[ \t]*[\[(]([^\])]*)[\])]", re.MULTILINE)
_QUOTED = re.compile(r"""["'](\w+)["']""")

_PUBLIC_PACKAGES = ("ccwire", "ccwire.testing", "ccwire.batch")


def publish_module(module_name: str) -> None:
    """Give the public classes and functions taken from ``module_name`` their public module.

    Args:
        module_name: The module's ``__name__``.
    """
    namespace = vars(sys.modules[module_name])
    for attr, package in _published().get(module_name, ()):
        obj = namespace.get(attr)
        # a generic alias (``Callable[...]``) passes isclass() on Python 3.10 but its
        # ``__module__`` is read-only: only real classes and functions are renamed
        if isinstance(obj, types.GenericAlias):
            continue
        if inspect.isclass(obj) or inspect.isfunction(obj):
            obj.__module__ = package


@cache
def _exports(package: str) -> dict[str, tuple[str, str]]:
    """``{public name: (absolute source module, attribute)}`` for ``package``'s ``__all__``."""
    try:
        source, imports = package_init(package)
    except ImportError:
        return {}
    listed = getattr(sys.modules.get(package), "__all__", None)
    if listed is None:  # not imported, or still running its imports: read its source
        found = _ALL.search(source)
        listed = _QUOTED.findall(found[1]) if found else ()
    public = set(listed)
    table: dict[str, tuple[str, str]] = {}
    for _, relative, attr, name in imports:  # imports under TYPE_CHECKING count too
        if name in public:
            module = relative.lstrip(".")
            level = len(relative) - len(module)
            base = package.rsplit(".", level - 1)[0] if level > 1 else package
            table[name] = (f"{base}.{module}", attr)
    return table


@cache
def _published() -> dict[str, list[tuple[str, str]]]:
    """``{source module: [(attribute, public package), ...]}`` over the public packages."""
    found: dict[str, list[tuple[str, str]]] = {}
    for package in _PUBLIC_PACKAGES:
        for source, attr in _exports(package).values():
            found.setdefault(source, []).append((attr, package))
    return found
