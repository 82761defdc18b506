"""Lazy re-exports for a package ``__init__`` (PEP 562), from one source of truth.

``import ccwire`` must stay fast: the public names live in ~40 private modules, and
importing all of them up front costs far more than most programs use. A package lists
its re-exports once, as ordinary ``from .x import name`` statements inside an
``if TYPE_CHECKING:`` block (so type checkers, IDEs and documentation tools see plain
imports), and calls `lazy_exports()`. At run time the first access to a name
imports only the module that defines it; the table of which module defines which name
is read from that same block, so it cannot drift from what type checkers see.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Iterable
from functools import cache
from typing import Any

__all__ = [
    "Import",
    "exports_table",
    "lazy_exports",
    "lazy_module",
    "package_init",
    "relative_imports",
]


def lazy_module(name: str) -> Any:
    """The module ``name``, executed on first attribute access (`importlib.util.LazyLoader`).

    For modules only a rarely used path needs: importing the caller stays cheap. Type
    checkers should see a plain import (``if TYPE_CHECKING: from . import x`` / ``else:
    x = lazy_module(...)``).
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    import importlib.util

    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ImportError(f"no module named {name!r}", name=name)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import would: ``import a.b`` then ``a.b.x`` works
        setattr(sys.modules[parent], child, module)
    return module


# The package ``__init__``'s relative imports are read with patterns, not ``ast.parse``
# (a fifth of the cost, paid by every program that imports ccwire), once for both
# `lazy_exports()` and `publish_module()`; tests/test_public_api.py checks them
# against ``ast`` for the public packages. The patterns are compiled by the first lookup
# (re's cache), so that a bare ``import ccwire`` does not pay for them.
_FROM_IMPORT = (
    r"(?m)^(?P<indent>[ \t]*)from[ \t]+(?P<module>\.+[\w.]*)[ \t]+import[ \t]+"
    r"(?:\((?P<group>[^)]*)\)|(?P<line>[^\n]*))"
)
_TYPE_CHECKING_BLOCK = (
    r"(?m)^if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:[^\n]*\n(?:[ \t]*\n)*(?P<indent>[ \t]+)"
    r"[^\n]*\n(?:(?:[ \t]+[^\n]*)?\n)*"
)
_ITEM = r"(\w+)(?:[ \t]+as[ \t]+(\w+))?"
_COMMENT = r"#[^\n]*"

Import = tuple[bool, str, str, str]
"""``(directly inside if TYPE_CHECKING:, relative module, attribute, bound name)``."""


def relative_imports(source: str) -> list[Import]:
    """Every ``from .mod import a, b as c`` (or ``from ..mod``) statement of ``source``
    (Python text), however deep, name by name."""
    blocks = [(b.start(), b.end(), b["indent"]) for b in re.finditer(_TYPE_CHECKING_BLOCK, source)]
    found: list[Import] = []
    for stmt in re.finditer(_FROM_IMPORT, source):
        at, indent = stmt.start(), stmt["indent"]
        direct = any(start < at < end and indent == inner for start, end, inner in blocks)
        names = re.sub(_COMMENT, "", stmt["group"] if stmt["group"] is not None else stmt["line"])
        for attr, name in re.findall(_ITEM, names):
            found.append((direct, stmt["module"], attr, name or attr))
    return found


def exports_table(source: str) -> dict[str, tuple[str, str]]:
    """``{public name: (relative module, attribute)}`` from the ``TYPE_CHECKING`` block.

    Pure: ``source`` is the package ``__init__``'s text. Only relative ``from .mod import
    a, b as c`` (or ``from ..mod``) statements directly inside ``if TYPE_CHECKING:`` count.
    """
    return {
        name: (module, attr) for direct, module, attr, name in relative_imports(source) if direct
    }


@cache
def package_init(package: str) -> tuple[str, list[Import]]:
    """The source of ``package``'s ``__init__`` and its `relative_imports()` (read once;
    the package need not be imported)."""
    module = sys.modules.get(package)
    if module is not None:
        spec = module.__spec__
    else:
        import importlib.util

        spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise ImportError(f"no package named {package!r}", name=package)
    get_source = getattr(spec.loader, "get_source", None)
    source = get_source(package) if get_source is not None else None
    if source is None:  # no loader that knows the source: read the file
        with open(spec.origin, encoding="utf-8") as f:
            source = f.read()
    return source, relative_imports(source)


def lazy_exports(
    package: str, public: Iterable[str] | None = None
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` that import names on first use.

    ``package`` is a package (its ``__init__``) or a plain module: the relative imports of
    its ``TYPE_CHECKING`` block resolve as they would in its source. ``public`` is its
    ``__all__``; a name in it that the ``TYPE_CHECKING`` block does not import is a bug,
    reported at the first lazy access. Without ``public``, every name the block imports
    is resolved lazily.
    """
    names = None if public is None else frozenset(public)
    table: dict[str, tuple[str, str]] = {}

    def load_table() -> dict[str, tuple[str, str]]:
        if not table:
            module = sys.modules[package]
            imports = package_init(package)[1]
            table.update((name, (mod, attr)) for direct, mod, attr, name in imports if direct)
            missing = sorted(n for n in names or () if n not in table and n not in vars(module))
            if missing:
                raise ImportError(f"{package}.__all__ names {missing} but does not import them")
        return table

    def __getattr__(name: str) -> object:
        if names is not None and name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = load_table().get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = sys.modules[package]
        value = getattr(importlib.import_module(where[0], module.__package__), where[1])
        setattr(module, name, value)  # later accesses skip this hook
        return value

    def __dir__() -> list[str]:
        lazy = load_table().keys() if names is None else names
        return sorted(set(lazy) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
