"""Lazy imports, one way: a module's ``if TYPE_CHECKING`` imports, loaded on first use.

``import ccwire`` must stay cheap: the public names live in many private modules, and
most programs use a few of them. A public package writes its re-exports once, as
ordinary imports, guarded so that they run only when needed::

    from typing import TYPE_CHECKING

    from ._core.lazy import install_lazy_importer, publish

    if TYPE_CHECKING or not install_lazy_importer(__name__):
        from ._wire.messages import AssistantMessage, TextBlock
        publish(__name__)

Type checkers, IDEs and documentation tools read plain imports. At run time
`install_lazy_importer()` reads that block from the module's source with `ast` and
gives the module a ``__getattr__`` (PEP 562): the first access to a name imports the
module that defines it. Where no source can be read (an install that ships only
bytecode) it returns False, and the block runs as written: every name is imported at
once and `publish()` runs.

Either way a public class or function reports the public module it is imported from
(``ccwire.TextBlock.__module__ == "ccwire"``), so that reprs, ``help()``, tracebacks and
pickles say what users write; `_publish()` is the one place that sets it.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from importlib import import_module
from types import FunctionType, GenericAlias, ModuleType
from typing import Any, ForwardRef

__all__ = ["install_lazy_importer", "lazy_table", "publish"]

_INSTALLER = "install_lazy_importer"


def install_lazy_importer(module_name: str) -> bool:
    """Make the imports of ``module_name``'s lazy block load on first use.

    Call it as ``if TYPE_CHECKING or not install_lazy_importer(__name__):`` at the top
    level of the module; the block under it holds ``from .x import name`` statements
    (relative, or absolute) and may end with ``publish(__name__)``.

    Args:
        module_name: The calling module's ``__name__``.

    Returns:
        True when the module's ``__getattr__`` and ``__dir__`` now serve the block's
        names; False when the module's source cannot be read (the caller then runs the
        block itself).
    """
    module = sys.modules[module_name]
    source = _source(module)
    if source is None:
        return False
    table = lazy_table(source, module.__file__ or module_name)
    namespace = vars(module)
    getattr_, dir_ = _hooks(module, table)
    namespace["__getattr__"] = getattr_
    namespace["__dir__"] = dir_
    _forget_helpers(namespace)
    return True


def publish(module_name: str) -> None:
    """Give the public objects already in ``module_name`` their public ``__module__``.

    What `install_lazy_importer()` does name by name, done for the whole module at once;
    the lazy block calls it last, for when it runs as written.

    Args:
        module_name: The public module's ``__name__``.
    """
    namespace = vars(sys.modules[module_name])
    _forget_helpers(namespace)
    for name, value in list(namespace.items()):
        _publish(value, name, module_name)


def lazy_table(source: str, filename: str = "<unknown>") -> dict[str, tuple[str, str]]:
    """``{name: (module, attribute)}`` of the lazy block in ``source``.

    The lazy block is the top-level ``if TYPE_CHECKING or not install_lazy_importer(...)``;
    each ``from module import attribute as name`` directly under it is an entry, with
    ``module`` as written (``"._wire.messages"``, ``"."``).

    Args:
        source: The module's Python source.
        filename: Where the source comes from, for syntax errors.

    Raises:
        ImportError: The block holds a ``*`` import, which cannot be resolved by name.
    """
    table: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source, filename).body:
        if not (isinstance(node, ast.If) and _is_lazy_guard(node.test)):
            continue
        for stmt in node.body:
            if not isinstance(stmt, ast.ImportFrom):
                continue
            module = "." * stmt.level + (stmt.module or "")
            for alias in stmt.names:
                if alias.name == "*":
                    raise ImportError(f"{filename}: a lazy block cannot hold 'import *'")
                table[alias.asname or alias.name] = (module, alias.name)
    return table


def _forget_helpers(namespace: dict[str, Any]) -> None:
    """Take this module's helpers out of the public module's namespace (and ``dir()``):
    they have done their work."""
    for helper in (install_lazy_importer, publish):
        if namespace.get(helper.__name__) is helper:
            del namespace[helper.__name__]


def _is_lazy_guard(test: ast.expr) -> bool:
    """Whether ``test`` is ``TYPE_CHECKING or not install_lazy_importer(...)``."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or)):
        return False
    first, *rest = test.values
    type_checking = (isinstance(first, ast.Name) and first.id == "TYPE_CHECKING") or (
        isinstance(first, ast.Attribute) and first.attr == "TYPE_CHECKING"
    )
    return type_checking and any(
        isinstance(v, ast.UnaryOp)
        and isinstance(v.op, ast.Not)
        and isinstance(v.operand, ast.Call)
        and isinstance(v.operand.func, ast.Name)
        and v.operand.func.id == _INSTALLER
        for v in rest
    )


def _source(module: ModuleType) -> str | None:
    """``module``'s source, or None (only bytecode installed).

    Read through its loader, else from the ``.py`` file it was loaded from: a loader
    that wraps the usual one (pytest's assertion rewriter, for a package that ships a
    pytest plugin) may not offer the source.
    """
    spec = module.__spec__
    if spec is None:
        return None
    get_source = getattr(spec.loader, "get_source", None)
    if get_source is not None:
        try:
            source: str | None = get_source(module.__name__)
        except (ImportError, OSError):  # the loader found no readable source
            source = None
        if source is not None:
            return source
    origin = spec.origin
    if origin is None or not origin.endswith(".py"):
        return None
    try:
        with open(origin, encoding="utf-8") as file:
            return file.read()
    except OSError:
        return None


def _hooks(
    module: ModuleType, table: dict[str, tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` that serve ``table`` for ``module``."""
    name, package, namespace = module.__name__, module.__package__, vars(module)
    siblings: dict[str, list[str]] = {}  # source module: the names taken under their own name
    for bound, (source, attr) in table.items():
        if bound == attr:
            siblings.setdefault(source, []).append(attr)
    # the source modules whose names are not all published yet, by their full names
    unpublished = {source: _absolute(source, package or "") for source in siblings}

    def publish_loaded() -> None:
        """Publish the names of every source module loaded by now (by this access, or
        as a side effect of an earlier one: an error class raised from inside ccwire
        reports ``ccwire`` though the program never named it), without running any
        module's hook; a module is done once all its names were there."""
        for source, full in list(unpublished.items()):
            loaded = sys.modules.get(full)
            if loaded is None:
                continue
            found = vars(loaded)
            for sibling in siblings[source]:
                _publish(found.get(sibling), sibling, name)
            if all(sibling in found for sibling in siblings[source]):
                del unpublished[source]

    def __getattr__(attr: str) -> Any:
        try:
            source_name, source_attr = table[attr]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}") from None
        source = import_module(source_name, package)
        if source is module:  # ``from . import x`` in a package: x is a submodule
            value = import_module(f"{name}.{source_attr}")
        else:
            value = getattr(source, source_attr)
        _publish(value, attr, name)
        if unpublished:
            publish_loaded()
        namespace[attr] = value  # later accesses skip this hook
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__


def _absolute(source: str, package: str) -> str:
    """The full name of module ``source`` (``.x``, ``..x`` or absolute) from ``package``
    (`importlib.util.resolve_name`, without importing it at ``import ccwire``)."""
    rest = source.lstrip(".")
    level = len(source) - len(rest)
    if not level:
        return source
    base = package.rsplit(".", level - 1)[0]
    return f"{base}.{rest}" if rest else base


def _publish(value: object, bound: str, public: str) -> None:
    """Report ``public`` as the ``__module__`` of ``value`` where that is right.

    Only a class or function bound under its own name (so that pickle finds it there),
    defined in a private module of the same package, from a public module.
    """
    if any(part.startswith("_") for part in public.split(".")):
        return  # a private module's lazy names keep the module that defines them
    # (a generic alias such as ``Callable[...]`` passes isinstance(type) on Python 3.10)
    if isinstance(value, GenericAlias) or not isinstance(value, (type, FunctionType)):
        return
    module = value.__module__
    if value.__qualname__ != bound or not module.startswith(public.partition(".")[0] + "."):
        return
    if any(part.startswith("_") for part in module.split(".")):
        value.__module__ = public
        if isinstance(value, type):
            _keep_annotation_scope(value, module)


def _keep_annotation_scope(cls: type, module: str) -> None:
    """Let ``typing.get_type_hints(cls)`` resolve the annotations written in ``module``.

    It looks the names of a class's string annotations up in the module its
    ``__module__`` names, which is now the public one, where ``Mapping`` or a private
    alias is not defined: each becomes a ``ForwardRef`` bound to ``module``, evaluated
    there (as the reference's classes are in theirs).  Nothing is evaluated now.

    A dataclass field's ``type`` (the same string) gets the same reference: pydantic
    reads the field's ``type``, not the annotation, and evaluates it in the module that
    ``__module__`` names too.
    """
    annotations = cls.__dict__.get("__annotations__")  # noqa: RUF063 - the dict itself, to change
    if not isinstance(annotations, dict):
        return
    fields = cls.__dict__.get("__dataclass_fields__", {})
    for name, annotation in annotations.items():
        if isinstance(annotation, str):
            ref = ForwardRef(annotation, is_argument=False, is_class=True, module=module)
            annotations[name] = ref
            field = fields.get(name)
            if field is not None and field.type == annotation:
                field.type = ref
