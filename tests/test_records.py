"""ccwire's fast frozen dataclasses behave as ``dataclasses.dataclass`` builds them.

The same class bodies go through both decorators; every observable behaviour is compared.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
import textwrap
import types
from collections.abc import Mapping
from typing import Any

import pytest

from ccwire._core import records as _records
from ccwire._core.slots import slot_builder

# typed loosely here: type checkers see ``dataclasses.dataclass`` where ccwire uses it
records: Any = _records


def _define(decorator: Any) -> dict[str, Any]:
    @decorator(frozen=True, slots=True)
    class Block:
        """A block."""

        text: str
        n: int = 3
        tags: tuple[str, ...] = ()
        raw: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False, repr=False)

    @decorator(frozen=True, slots=True)
    class Base:
        """A base."""

        subtype: str
        data: Mapping[str, Any] = dataclasses.field(default_factory=dict)
        raw: Mapping[str, Any] = dataclasses.field(
            default_factory=dict, compare=False, repr=False, kw_only=True
        )

    @decorator(frozen=True, slots=True)
    class Child(Base):
        """A child."""

        task_id: str = ""
        extra: int | None = None

    @decorator(frozen=True)
    class Plain:
        """No slots, no eq."""

        a: int
        b: list[int] = dataclasses.field(default_factory=list, hash=False)

    @decorator(frozen=True, eq=False)
    class Identity:
        """Compared by identity."""

        a: int = 0

    @decorator(kw_only=True, repr=False)
    class Opts:
        """Mutable, keyword-only, with its own repr and a __post_init__."""

        a: int = 0
        b: list[int] = dataclasses.field(default_factory=list)
        c: str | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
        d: list[int] = dataclasses.field(default_factory=list, init=False)

        def __post_init__(self) -> None:
            self.c = f"a={self.a}"

        def __repr__(self) -> str:
            return f"Opts({self.a})"

    @decorator(frozen=True, slots=True)
    class Post:
        """Frozen, with a __post_init__."""

        a: int
        b: int = 0

        def __post_init__(self) -> None:
            object.__setattr__(self, "b", self.a + 1)

    return {
        "Block": Block,
        "Base": Base,
        "Child": Child,
        "Plain": Plain,
        "Identity": Identity,
        "Opts": Opts,
        "Post": Post,
    }


REAL: dict[str, Any] = _define(dataclasses.dataclass)
FAST: dict[str, Any] = _define(records.dataclass)

SAMPLES: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "Block": (("hi",), {"n": 4, "raw": {"x": 1}}),
    "Base": (("init",), {"data": {"k": "v"}, "raw": {"r": 2}}),
    "Child": (("task", {"a": 1}, "t1"), {"extra": 5, "raw": {}}),
    "Plain": ((1,), {"b": [2]}),
    "Identity": ((), {"a": 7}),
    "Opts": ((), {"a": 2, "b": [1]}),
    "Post": ((5,), {}),
}


def _field_view(cls: Any) -> list[tuple[Any, ...]]:
    return [
        (f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash,
         f.kw_only)
        for f in dataclasses.fields(cls)
    ]  # fmt: skip


@pytest.mark.parametrize("name", sorted(REAL))
def test_the_fast_path_is_taken(name: str) -> None:
    assert "__init__" not in vars(FAST[name]) or not inspect.isfunction(
        vars(FAST[name])["__init__"]
    )


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_fast_record_is_the_same_dataclass(name: str) -> None:
    real, fast = REAL[name], FAST[name]
    is_dataclass: bool = dataclasses.is_dataclass(fast)  # (no narrowing of `fast`)
    assert is_dataclass
    assert _field_view(fast) == _field_view(real)
    assert str(inspect.signature(fast)) == str(inspect.signature(real))
    assert fast.__match_args__ == real.__match_args__
    if sys.version_info >= (3, 11):
        assert vars(fast).get("__slots__") == vars(real).get("__slots__")
    else:  # 3.10's dataclasses re-declare inherited slots; records declare their own only
        inherited = {n for b in real.__mro__[1:] for n in vars(b).get("__slots__", ())}
        real_slots = vars(real).get("__slots__")
        own = None if real_slots is None else tuple(n for n in real_slots if n not in inherited)
        assert vars(fast).get("__slots__") == own
    rp, fp = real.__dataclass_params__, fast.__dataclass_params__
    assert (rp.frozen, rp.eq, rp.init, rp.repr) == (fp.frozen, fp.eq, fp.init, fp.repr)
    assert fast.__doc__ == real.__doc__ and fast.__qualname__.endswith(name)
    for attr in ("n", "tags", "task_id", "extra", "a"):  # class-level defaults, without slots
        if hasattr(real, attr) and not isinstance(getattr(real, attr), types.MemberDescriptorType):
            assert getattr(fast, attr) == getattr(real, attr)

    args, kwargs = SAMPLES[name]
    r1, r2, f1, f2 = (
        real(*args, **kwargs),
        real(*args, **kwargs),
        fast(*args, **kwargs),
        fast(*args, **kwargs),
    )
    assert repr(f1).replace(fast.__qualname__, "X") == repr(r1).replace(real.__qualname__, "X")
    assert (f1 == f2) == (r1 == r2)
    assert (f1 != f2) == (r1 != r2)
    assert (f1 == object()) is False
    assert dataclasses.asdict(f1) == dataclasses.asdict(r1)
    assert dataclasses.astuple(f1) == dataclasses.astuple(r1)
    if real.__hash__ is None or not rp.eq:
        assert fast.__hash__ is real.__hash__  # None, or object's
    else:
        try:
            expected: Any = hash(r1)
        except TypeError:
            expected = TypeError
        if expected is TypeError:
            with pytest.raises(TypeError):
                hash(f1)
        else:
            assert hash(f1) == expected
    changed = dataclasses.replace(f1)
    assert type(changed) is fast and (changed == f1) == (dataclasses.replace(r1) == r1)
    assert [getattr(f1, f.name) for f in dataclasses.fields(fast)] == [
        getattr(r1, f.name) for f in dataclasses.fields(real)
    ]
    if not rp.frozen:
        f1.a = r1.a = 9
        assert f1.a == 9 and (f1 == r1) is False  # different classes
        return
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field"):
        f1.a = 1
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field"):
        del f1.a
    assert copy.copy(f1) == f1 or not real.__dataclass_params__.eq


@pytest.mark.parametrize("name", ["Block", "Child"])
def test_fast_records_pickle_and_build_from_slots(name: str) -> None:
    fast = FAST[name]
    args, kwargs = SAMPLES[name]
    obj = fast(*args, **kwargs)
    assert copy.deepcopy(obj) == obj  # through __getstate__/__setstate__, as pickle does
    if name == "Block":
        build: Any = slot_builder(fast)
        assert build("hi", 4, (), {"x": 1}) == fast("hi", n=4, raw={"x": 1})


def test_ccwire_messages_pickle() -> None:
    import ccwire

    msgs: list[Any] = [
        ccwire.AssistantMessage(content=[ccwire.TextBlock("hi")], model="m"),
        ccwire.TaskStartedMessage(  # a subclass of SystemMessage
            subtype="task_started", data={}, task_id="t", description="d", uuid="u", session_id="s"
        ),
    ]
    for msg in msgs:
        assert pickle.loads(pickle.dumps(msg)) == msg
        assert dataclasses.replace(msg) == msg


def test_mistakes_are_refused_as_dataclasses_refuse_them() -> None:
    with pytest.raises(ValueError, match="mutable default"):

        @records.dataclass(frozen=True)
        class Bad:
            """Mutable default."""

            a: list[int] = []

    with pytest.raises(TypeError, match="non-default argument"):

        @records.dataclass(frozen=True)
        class Order:
            """Wrong order."""

            a: int = 0
            b: int


def test_an_own_init_is_kept_as_dataclasses_keeps_it() -> None:
    def define(decorator: Any) -> Any:
        @decorator(frozen=True)
        class Aliased:
            """Takes its field under a second name too."""

            maxTurns: int | None = None
            label: str = ""

            def __init__(self, maxTurns: int | None = None, *, max_turns: int | None = None):
                object.__setattr__(self, "maxTurns", maxTurns if max_turns is None else max_turns)
                object.__setattr__(self, "label", "set")

        return Aliased

    real, fast = define(dataclasses.dataclass), define(records.dataclass)
    assert inspect.isfunction(vars(fast)["__init__"])  # its own, not one generated
    assert _field_view(fast) == _field_view(real)
    assert str(inspect.signature(fast)) == str(inspect.signature(real))
    rp, fp = real.__dataclass_params__, fast.__dataclass_params__
    assert (rp.frozen, rp.eq, rp.init, rp.repr) == (fp.frozen, fp.eq, fp.init, fp.repr)
    r, f = real(max_turns=3), fast(max_turns=3)
    assert repr(f).replace(fast.__qualname__, "X") == repr(r).replace(real.__qualname__, "X")
    assert (
        f == fast(3)
        and hash(f) == hash(fast(3))
        and dataclasses.asdict(f)
        == {
            "maxTurns": 3,
            "label": "set",
        }
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.label = "x"


def test_other_classes_go_to_dataclasses() -> None:
    @records.dataclass(frozen=True, order=True)
    class Ordered:
        """An option the fast path does not take."""

        a: int = 0

    @records.dataclass(frozen=True)
    class OwnEq:
        """Defines what the decorator would write."""

        a: int = 0

        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    ordered: Any = Ordered  # (type checkers do not see through records.dataclass)
    own_eq: Any = OwnEq
    assert inspect.isfunction(vars(Ordered)["__init__"]) and ordered(1) < ordered(2)
    assert inspect.isfunction(vars(OwnEq)["__init__"]) and own_eq(1) == own_eq(2)


def test_the_lazy_init_behaves_as_a_function_for_every_lookup() -> None:
    @records.dataclass(frozen=True, slots=True)
    class Fresh:
        """Not instantiated yet."""

        a: int
        b: str = "x"

    class Sub(Fresh):  # a plain subclass (what users may write) uses Fresh's __init__
        __slots__ = ()

    # inspect (3.13) asks the descriptor with the class as the instance and its
    # metaclass as the owner: a function would give a bound method, so does this
    bound = vars(Fresh)["__init__"].__get__(Fresh, type)
    assert bound.__self__ is Fresh and inspect.isfunction(vars(Fresh)["__init__"])
    assert str(inspect.signature(Fresh)) == "(a: 'int', b: 'str' = 'x') -> None"
    sub: Any = Sub
    assert sub(1).b == "x" and sub(2, "y") == sub(2, "y")


def test_no_record_of_ccwire_leaves_the_fast_path_for_want_of_a_docstring() -> None:
    """A class without a docstring goes to ``dataclasses`` (which writes one from the
    signature), compiling its methods at import: ~0.6 ms for one class on the first
    connect's path. Every record ccwire defines that leaves the fast path must have
    another reason (``ClassVar`` fields, methods written by hand, ...)."""
    script = textwrap.dedent(
        """
        import importlib, pkgutil
        from ccwire._core import records
        simple, left = records._simple, []
        def spy(cls, **kw):
            ok = simple(cls, **kw)
            if not ok and cls.__doc__ is None:
                cls.__doc__ = "-"
                if simple(cls, **kw):  # a docstring alone would have kept it fast
                    left.append(f"{cls.__module__}.{cls.__qualname__}")
                cls.__doc__ = None
            return ok
        records._simple = spy
        import ccwire
        skip = ("ccwire.__main__", "ccwire._batch.ray", "ccwire.batch")
        for m in pkgutil.walk_packages(ccwire.__path__, "ccwire."):
            if not m.name.startswith(skip):
                importlib.import_module(m.name)
        importlib.import_module("ccwire._callbacks.hooks")
        importlib.import_module("ccwire._transport.line_writer")
        print(sorted(left))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr
