"""Frozen dataclasses that cost almost nothing to define: `dataclass()`, a drop-in for
``dataclasses.dataclass`` on the message and callback types.

``dataclasses.dataclass`` compiles five or six methods per class when the class is
defined (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``,
``__delattr__``): for ccwire's ~60 frozen types that was a third of the time of
importing the usual names. Here the same class is built without compiling anything:
``__repr__``, ``__eq__``, ``__hash__`` and the frozen ``__setattr__``/``__delattr__`` are
shared closures over the field names, and ``__init__`` is generated (the same code as
``dataclasses`` generates) the first time it is looked up, e.g. by the first
instantiation or ``inspect.signature()``.

The result is a real dataclass: ``dataclasses.fields()``, ``asdict()``, ``replace()``,
``is_dataclass()``, pickling, ``__match_args__`` and ``__slots__`` behave as they do for
``dataclasses.dataclass`` (tests compare the two). Type checkers see
``dataclasses.dataclass`` itself (modules import this one only at run time). Any class
outside the simple case (``ClassVar``/``InitVar`` fields, methods the decorator would
write defined by hand but ``__init__``, which is kept as ``dataclasses`` keeps it, options
other than ``frozen``/``slots``/``eq``/``repr``/``kw_only``) is handed to
``dataclasses.dataclass`` unchanged.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import operator
import reprlib
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["dataclass", "prepare"]

T = TypeVar("T")
_MISSING: Any = dataclasses.MISSING
_FALLBACK_WORDS = ("ClassVar", "InitVar", "KW_ONLY")


class _FactorySentinel:
    """The default of a ``default_factory`` argument (shown as ``<factory>``)."""

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _FactorySentinel()


@functools.cache
def _prototype() -> Any:
    """A real dataclass with one field and no methods (none compiled: one prototype is
    cheaper than one per set of flags), so that no private constructor is used."""
    proto = type(
        "_Proto", (), {"__module__": __name__, "__annotations__": {"x": "int"}, "__doc__": "-"}
    )
    return dataclasses.dataclass(init=False, repr=False, eq=False)(proto)


@functools.cache
def _params(frozen: bool, eq: bool, repr_: bool, slots: bool) -> Any:
    """The ``__dataclass_params__`` ``dataclasses`` gives a class with these flags."""
    params = copy.copy(_prototype().__dataclass_params__)
    params.init, params.repr, params.eq, params.frozen = True, repr_, eq, frozen
    if hasattr(params, "slots"):  # Python 3.12+
        params.slots = slots
    return params


def _field_marker() -> Any:
    """The marker ``dataclasses.fields()`` selects fields by."""
    return _prototype().__dataclass_fields__["x"]._field_type


def dataclass(
    cls: type[T] | None = None,
    /,
    *,
    frozen: bool = False,
    slots: bool = False,
    eq: bool = True,
    repr: bool = True,  # the keyword of dataclasses.dataclass
    kw_only: bool = False,
    **options: Any,
) -> Any:
    """``dataclasses.dataclass``, without compiling methods at definition.

    Args:
        cls: The class (when used without parentheses).
        frozen: As for ``dataclasses.dataclass``.
        slots: As for ``dataclasses.dataclass``.
        eq: As for ``dataclasses.dataclass``.
        repr: As for ``dataclasses.dataclass``.
        kw_only: As for ``dataclasses.dataclass``.
        **options: Any other ``dataclasses.dataclass`` option (then it builds the class).

    Returns:
        The decorator, or the dataclass.
    """

    def wrap(c: type[T]) -> type[T]:
        if options or not _simple(c, frozen=frozen, eq=eq, repr_=repr):
            real = dataclasses.dataclass(
                frozen=frozen, slots=slots, eq=eq, repr=repr, kw_only=kw_only, **options
            )
            return real(c)
        built: type[T] = _build(c, frozen=frozen, slots=slots, eq=eq, repr_=repr, kw_only=kw_only)
        return built

    return wrap if cls is None else wrap(cls)


def prepare(*classes: type) -> None:
    """Generate the ``__init__`` of ``classes`` now: for the types every connection
    builds, so that their first instances do not cost the handshake (about 1.3 ms for
    the options, control and system/result types)."""
    for cls in classes:
        lazy = cls.__dict__.get("__init__")
        if isinstance(lazy, _LazyInit):
            lazy.__get__(None, cls)


def _simple(cls: type, *, frozen: bool, eq: bool, repr_: bool) -> bool:
    own = cls.__dict__
    if "__annotations__" not in own and "__annotate__" in own:
        return False  # annotations evaluated lazily (3.14): dataclasses knows how
    annotations = own.get("__annotations__", {})
    if any(
        not isinstance(a, str) or any(w in a for w in _FALLBACK_WORDS) for a in annotations.values()
    ):
        return False
    written = ["__hash__", "__slots__", "__match_args__"]  # an own __init__ is kept, as there
    written += ["__repr__"] * repr_ + ["__eq__"] * eq + ["__setattr__", "__delattr__"] * frozen
    if any(name in own for name in written) or cls.__doc__ is None:
        return False
    for base in cls.__mro__[1:-1]:
        params = base.__dict__.get("__dataclass_params__")
        if params is not None and params.frozen != frozen:
            return False  # dataclasses refuses this; let it say so
    return True


def _build(cls: Any, *, frozen: bool, slots: bool, eq: bool, repr_: bool, kw_only: bool) -> Any:
    marker = _field_marker()
    fields: dict[str, Any] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = base.__dict__.get("__dataclass_fields__")
        if base_fields is not None:
            fields.update(base_fields)
    namespace = dict(cls.__dict__)
    for name, annotation in namespace.get("__annotations__", {}).items():
        default = namespace.get(name, _MISSING)
        f: Any = (
            default
            if isinstance(default, dataclasses.Field)
            else dataclasses.field(default=default)
        )
        f.name, f.type = name, annotation
        f._field_type = marker
        if f.kw_only is _MISSING:
            f.kw_only = kw_only
        if f.default is not _MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not allowed: "
                "use default_factory"
            )
        fields[name] = f
        if f.default is _MISSING:
            namespace.pop(name, None)
        else:
            namespace[name] = f.default
    _check_order(fields)
    names = tuple(fields)
    namespace["__dataclass_fields__"] = fields
    namespace["__dataclass_params__"] = _params(frozen, eq, repr_, slots)
    namespace["__match_args__"] = tuple(f.name for f in fields.values() if f.init and not f.kw_only)
    lazy_init = None
    if "__init__" not in namespace:  # dataclasses keeps an __init__ the class defines
        lazy_init = namespace["__init__"] = _LazyInit()
    if slots:
        inherited = set(itertools.chain.from_iterable(_slots_of(b) for b in cls.__mro__[1:-1]))
        namespace["__slots__"] = tuple(n for n in names if n not in inherited)
        for n in names:
            namespace.pop(n, None)
        namespace.pop("__dict__", None)
        namespace.pop("__weakref__", None)
        new: Any = type(cls)(cls.__name__, cls.__bases__, namespace)
        new.__qualname__ = cls.__qualname__
        if frozen:
            new.__getstate__ = _getstate  # pickling without __dict__
            new.__setstate__ = _setstate
    else:
        new = cls
        for key, value in namespace.items():
            if key not in cls.__dict__ or cls.__dict__[key] is not value:
                setattr(new, key, value)
        for n in names:
            if n in cls.__dict__ and fields[n].default is _MISSING:
                delattr(new, n)
    if lazy_init is not None:
        lazy_init.cls = new
    _add_methods(new, fields, frozen=frozen, eq=eq, repr_=repr_)
    return new


def _check_order(fields: dict[str, dataclasses.Field[Any]]) -> None:
    seen_default = False
    for f in fields.values():
        if not f.init or f.kw_only:
            continue
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")
        seen_default = seen_default or has_default


def _slots_of(cls: type) -> tuple[str, ...]:
    found = cls.__dict__.get("__slots__", ())
    return (found,) if isinstance(found, str) else tuple(found)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _self: ()
    if len(names) == 1:
        one = operator.attrgetter(names[0])
        return lambda self: (one(self),)
    return operator.attrgetter(*names)


def _add_methods(
    cls: Any, fields: dict[str, dataclasses.Field[Any]], *, frozen: bool, eq: bool, repr_: bool
) -> None:
    frozen_names = frozenset(fields)

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in frozen_names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in frozen_names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    methods: dict[str, Any] = {}
    if frozen:
        methods["__setattr__"], methods["__delattr__"] = __setattr__, __delattr__
    if repr_:
        shown = tuple(f.name for f in fields.values() if f.repr)

        @reprlib.recursive_repr()
        def __repr__(self: Any) -> str:
            args = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
            return f"{self.__class__.__qualname__}({args})"

        methods["__repr__"] = __repr__
    if eq:
        compared = _getter(tuple(f.name for f in fields.values() if f.compare))
        hashed = _getter(
            tuple(f.name for f in fields.values() if (f.compare if f.hash is None else f.hash))
        )

        def __eq__(self: Any, other: object) -> bool:
            if other.__class__ is self.__class__:
                return compared(self) == compared(other)
            return NotImplemented

        def __hash__(self: Any) -> int:
            return hash(hashed(self))

        methods["__eq__"] = __eq__
        if frozen:
            methods["__hash__"] = __hash__
    for name, fn in methods.items():
        fn.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, fn)
    if sys.version_info >= (3, 13):  # copy.replace(), as dataclasses gives it from 3.13

        def __replace__(self: Any, /, **changes: Any) -> Any:
            return dataclasses.replace(self, **changes)

        __replace__.__qualname__ = f"{cls.__qualname__}.__replace__"
        cls.__replace__ = __replace__
    if eq and not frozen:
        cls.__hash__ = None  # mutable and compared by value: unhashable, as dataclasses does


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, f.name) for f in dataclasses.fields(self)]


def _setstate(self: Any, state: list[Any]) -> None:
    for f, value in zip(dataclasses.fields(self), state, strict=False):
        object.__setattr__(self, f.name, value)


class _LazyInit:
    """``__init__`` until first looked up: then the generated one replaces it."""

    cls: type | None = None  # the class it belongs to (set once the class exists)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        cls = self.cls
        assert cls is not None
        fn = _make_init(cls)
        type.__setattr__(cls, "__init__", fn)
        return fn if obj is None else fn.__get__(obj, owner)  # as a function would


def _make_init(cls: Any) -> Callable[..., None]:
    """The ``__init__`` ``dataclasses`` would write for ``cls``: a frozen class stores
    through ``object.__setattr__``, a ``default_factory`` runs when its argument is
    omitted, fields with ``init=False`` get their default, ``__post_init__`` runs last."""
    frozen = cls.__dataclass_params__.frozen
    all_fields = dataclasses.fields(cls)
    fields = [f for f in all_fields if f.init]
    namespace: dict[str, Any] = {"_set": object.__setattr__, "_HAS_FACTORY": _HAS_FACTORY}
    params: list[str] = []
    kw_params: list[str] = []
    body: list[str] = []

    def store(name: str, value: str) -> None:
        body.append(
            f"    _set(self, {name!r}, {value})" if frozen else f"    self.{name} = {value}"
        )

    for f in all_fields:
        name = f.name
        if f.default_factory is not _MISSING:
            namespace[f"_factory_{name}"] = f.default_factory
        elif f.default is not _MISSING:
            namespace[f"_default_{name}"] = f.default
        if not f.init:
            if f.default_factory is not _MISSING:
                store(name, f"_factory_{name}()")
            elif f.default is not _MISSING:
                store(name, f"_default_{name}")
            continue
        if f.default_factory is not _MISSING:
            param = f"{name}=_HAS_FACTORY"
            store(name, f"_factory_{name}() if {name} is _HAS_FACTORY else {name}")
        else:
            param = f"{name}=_default_{name}" if f.default is not _MISSING else name
            store(name, name)
        (kw_params if f.kw_only else params).append(param)
    if hasattr(cls, "__post_init__"):
        body.append("    self.__post_init__()")
    signature = ", ".join(["self", *params, *(["*", *kw_params] if kw_params else [])])
    source = f"def __init__({signature}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, namespace)  # generated from the field names only
    fn: Callable[..., None] = namespace["__init__"]
    fn.__qualname__ = f"{cls.__qualname__}.__init__"
    fn.__module__ = cls.__module__
    fn.__annotations__ = {**{f.name: f.type for f in fields}, "return": None}
    return fn
