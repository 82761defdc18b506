"""Describe a package's public API as plain JSON, so two packages can be compared.

Run as a script under any interpreter (it uses the standard library only):
``python tests/compat/api_dump.py claude_agent_sdk`` prints the description of
``claude_agent_sdk``; `describe_package` does the same in-process. For every name in
the package's ``__all__`` it records what kind of thing it is and its shape:

* a dataclass: its fields in ``__init__``'s order, each with its default (``None`` when required),
  and whether it is also a read-only mapping (or a dict);
* a `TypedDict`: its required and optional keys;
* a `Literal` (or a union of them): the allowed values; another union: its members;
* a class: its exported bases, its public methods (kind, parameters, defaults,
  whether abstract) and properties;
* a function: its kind and parameters;
* anything else: its type and, for sets and strings, its value.

Defaults are written as text: ``repr()`` of the value, ``factory:<repr of a fresh
value>`` for a default factory, and ``sys.stderr``/``sys.stdout`` for those streams.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import importlib
import inspect
import json
import sys
import types
import typing
from typing import Any

REQUIRED = None


def _default_text(value: Any) -> str:
    if value is sys.stderr or value is sys.__stderr__:
        return "sys.stderr"
    if value is sys.stdout or value is sys.__stdout__:
        return "sys.stdout"
    if inspect.isclass(value) or inspect.isfunction(value):
        return f"<{value.__qualname__}>"
    return repr(value)


def _field_default(f: dataclasses.Field[Any]) -> str | None:
    if f.default is not dataclasses.MISSING:
        return _default_text(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return "factory:" + _default_text(f.default_factory())
    return REQUIRED


def _is_param(cls: type, name: str) -> bool:
    """Whether ``cls(...)`` takes ``name`` (a field its own ``__init__`` sets)."""
    try:
        return name in inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False


def _is_typeddict(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, dict) and hasattr(obj, "__total__")


def _literal_values(obj: Any) -> list[Any] | None:
    """The values of a `Literal` or of a union of `Literal`s, else None."""
    origin = typing.get_origin(obj)
    if origin is typing.Literal:
        return list(typing.get_args(obj))
    if origin in (typing.Union, types.UnionType):
        values: list[Any] = []
        for arg in typing.get_args(obj):
            sub = _literal_values(arg)
            if sub is None:
                return None
            values.extend(sub)
        return values
    return None


def _type_name(obj: Any) -> str:
    if obj is type(None):
        return "None"
    name = getattr(obj, "__name__", None)
    if isinstance(name, str):
        return name
    return repr(obj)


def _params(func: Any) -> list[list[Any]]:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    out: list[list[Any]] = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        default = REQUIRED if p.default is inspect.Parameter.empty else _default_text(p.default)
        out.append([p.name, p.kind.name, default])
    return out


def _callable_kind(func: Any) -> str:
    if inspect.isasyncgenfunction(func):
        return "asyncgen"
    if inspect.iscoroutinefunction(func):
        return "async"
    return "sync"


def _describe_class(cls: type, exported: dict[int, str]) -> dict[str, Any]:
    bases = [exported[id(b)] for b in cls.__mro__[1:] if id(b) in exported]
    builtin_bases = [
        b.__name__ for b in cls.__mro__[1:] if b.__module__ == "builtins" and b is not object
    ]
    methods: dict[str, Any] = {}
    abstract: frozenset[str] = getattr(cls, "__abstractmethods__", frozenset())
    for name in dir(cls):
        if name.startswith("_") and name not in ("__init__", "__aenter__", "__aexit__"):
            continue
        try:
            attr = inspect.getattr_static(cls, name)
        except AttributeError:  # listed by dir() but not found statically (Python 3.10)
            continue
        if isinstance(attr, property):
            methods[name] = {"kind": "property", "abstract": name in abstract}
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if not inspect.isfunction(attr):
            continue
        if name == "__init__" and attr is object.__init__:
            continue
        methods[name] = {
            "kind": _callable_kind(attr),
            "params": _params(attr),
            "abstract": name in abstract,
        }
    return {"bases": bases, "builtin_bases": builtin_bases, "methods": methods}


def _describe_alias(obj: Any) -> dict[str, Any]:
    literals = _literal_values(obj)
    if literals is not None:
        return {"kind": "literal", "values": sorted(map(str, literals))}
    origin = typing.get_origin(obj)
    if origin in (typing.Union, types.UnionType):
        return {"kind": "union", "members": sorted(_type_name(a) for a in typing.get_args(obj))}
    return {"kind": "generic", "origin": _type_name(origin)}


def describe(name: str, obj: Any, exported: dict[int, str]) -> dict[str, Any]:
    """Describe one public object (see the module docstring for the shapes)."""
    if _is_typeddict(obj):
        return {
            "kind": "typeddict",
            "required": sorted(obj.__required_keys__),
            "optional": sorted(obj.__optional_keys__),
        }
    if isinstance(obj, types.GenericAlias) or typing.get_origin(obj) is not None:
        return _describe_alias(obj)  # (on Python 3.10 `dict[str, int]` passes isinstance(type))
    if isinstance(obj, type) and dataclasses.is_dataclass(obj):
        desc = _describe_class(obj, exported)
        desc["kind"] = "dataclass"
        desc["mapping"] = issubclass(obj, collections.abc.Mapping)
        if issubclass(obj, dict):  # only then: the reference's snapshot stays as it is
            desc["dict"] = True
        every = dataclasses.fields(obj)
        # in __init__'s order: keyword-only fields come after the positional ones, and
        # fields set by a hand-written __init__ (init=False) last
        ordered = [f for f in every if f.init and not getattr(f, "kw_only", False)]
        ordered += [f for f in every if f.init and getattr(f, "kw_only", False)]
        ordered += [f for f in every if not f.init and f.repr is False and _is_param(obj, f.name)]
        desc["fields"] = [[f.name, _field_default(f)] for f in ordered]
        return desc
    if isinstance(obj, type):
        desc = _describe_class(obj, exported)
        desc["kind"] = "class"
        return desc
    if inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return {"kind": "function", "call": _callable_kind(obj), "params": _params(obj)}
    if isinstance(obj, (frozenset, set)):
        return {"kind": "value", "type": "set", "value": sorted(map(str, obj))}
    if isinstance(obj, str):
        return {"kind": "value", "type": "str"}
    return {"kind": "value", "type": type(obj).__name__}


def describe_package(module_name: str) -> dict[str, Any]:
    """Describe every name of ``module_name.__all__`` (see the module docstring)."""
    module = importlib.import_module(module_name)
    names = list(module.__all__)
    objects = {n: getattr(module, n) for n in names}
    exported = {id(o): n for n, o in objects.items() if isinstance(o, type)}
    return {
        "module": module_name,
        "version": getattr(module, "__version__", None),
        "names": names,
        "objects": {n: describe(n, objects[n], exported) for n in names},
    }


if __name__ == "__main__":
    json.dump(describe_package(sys.argv[1]), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
