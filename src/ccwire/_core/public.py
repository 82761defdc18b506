"""Public objects report the public module they are imported from.

The implementation lives in private layers (``ccwire._wire.messages``...), but users
import from ``ccwire``; reprs, ``help()``, tracebacks and pickles should say so. Each
module that a public package imports public classes or functions from ends with
``publish_module(__name__)``, which gives them the ``__module__`` of that package. What
is public, and from where, is read from the public packages' own ``__init__`` (their
imports and ``__all__``), so nothing here can drift from it.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import sys
from functools import cache

__all__ = ["publish_module"]

_PUBLIC_PACKAGES = ("ccwire", "ccwire.testing", "ccwire.batch")


def publish_module(module_name: str) -> None:
    """Give the public classes and functions taken from ``module_name`` their public module.

    Args:
        module_name: The module's ``__name__``.
    """
    namespace = vars(sys.modules[module_name])
    for package in _PUBLIC_PACKAGES:
        for source, attr in _exports(package).values():
            if source != module_name:
                continue
            obj = namespace.get(attr)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                obj.__module__ = package


@cache
def _exports(package: str) -> dict[str, tuple[str, str]]:
    """``{public name: (absolute source module, attribute)}`` for ``package``'s ``__all__``."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return {}
    with open(spec.origin, encoding="utf-8") as f:  # the __init__ source, however it loads
        source = f.read()
    tree = ast.parse(source)
    public: set[str] = set()
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, (ast.List, ast.Tuple))
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ):
            public = {str(e.value) for e in node.value.elts if isinstance(e, ast.Constant)}
    table: dict[str, tuple[str, str]] = {}
    for found in ast.walk(tree):  # imports under TYPE_CHECKING count too
        if isinstance(found, ast.ImportFrom) and found.level >= 1 and found.module:
            level, module = found.level, found.module
            base = package.rsplit(".", level - 1)[0] if level > 1 else package
            for alias in found.names:
                name = alias.asname or alias.name
                if name in public:
                    table[name] = (f"{base}.{module}", alias.name)
    return table
