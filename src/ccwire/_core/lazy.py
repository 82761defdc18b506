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
import sys
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["exports_table", "lazy_exports", "lazy_module"]


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


def exports_table(source: str) -> dict[str, tuple[str, str]]:
    """``{public name: (relative module, attribute)}`` from the ``TYPE_CHECKING`` block.

    Pure: ``source`` is the package ``__init__``'s text. Only relative ``from .mod import
    a, b as c`` (or ``from ..mod``) statements directly inside ``if TYPE_CHECKING:`` count.
    """
    import ast

    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level >= 1 and stmt.module:
                for alias in stmt.names:
                    where = "." * stmt.level + stmt.module
                    table[alias.asname or alias.name] = (where, alias.name)
    return table


def _is_type_checking(test: object) -> bool:
    import ast

    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def lazy_exports(
    package: str, public: Iterable[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` that import names on first use.

    ``public`` is the package's ``__all__``. A name in it that the ``TYPE_CHECKING``
    block does not import is a bug, reported at the first lazy access.
    """
    names = frozenset(public)
    table: dict[str, tuple[str, str]] = {}

    def load_table() -> dict[str, tuple[str, str]]:
        if not table:
            module = sys.modules[package]
            loader: Any = module.__spec__.loader if module.__spec__ is not None else None
            get_source = getattr(loader, "get_source", None)
            source = get_source(package) if get_source is not None else None
            if source is None:  # no loader that knows the source: read the file
                assert module.__file__ is not None
                with open(module.__file__, encoding="utf-8") as f:
                    source = f.read()
            table.update(exports_table(source))
            missing = sorted(n for n in names if n not in table and n not in vars(module))
            if missing:
                raise ImportError(f"{package}.__all__ names {missing} but does not import them")
        return table

    def __getattr__(name: str) -> object:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = load_table().get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(where[0], package), where[1])
        setattr(sys.modules[package], name, value)  # later accesses skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted(names | set(vars(sys.modules[package])))

    return __getattr__, __dir__
