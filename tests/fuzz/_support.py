"""Shared pieces of the fuzz suite: the case counter, the settings helper and JSON strategies.

Every property is decorated with :func:`counted` (under ``@given``), so each example it
runs adds one to :data:`CASES`; ``report.py`` prints the total at the end of the session.

``CCWIRE_FUZZ_EXAMPLES=N`` replaces every property's own ``max_examples`` with ``N``
for long runs (the defaults keep the whole directory well under a minute on 2 cores).
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import settings, strategies as st
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from typing_extensions import ParamSpec

__all__ = [
    "CASES",
    "PROFILE",
    "counted",
    "fuzz_settings",
    "json_keys",
    "json_scalars",
    "json_values",
    "wire_scalars",
    "wire_values",
]

PROFILE = "ccwire-fuzz"
"""The hypothesis profile registered in ``conftest.py`` (``deadline=None``, ...)."""

ENV_EXAMPLES = "CCWIRE_FUZZ_EXAMPLES"

CASES: Counter[str] = Counter()
"""Examples run per property (keyed ``module::function``)."""

_ABANDONED = (StopTest, UnsatisfiedAssumption)

P = ParamSpec("P")
R = TypeVar("R")


def counted(fn: Callable[P, R]) -> Callable[P, R]:
    """Count every example the property runs to the end, pass or fail (explicit
    ``@example`` cases included; examples hypothesis abandons midway are not cases)."""
    key = f"{fn.__module__.rsplit('.', 1)[-1]}::{fn.__name__}"
    CASES[key] += 0  # a property that ran no example still shows up

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            result = fn(*args, **kwargs)
        except _ABANDONED:
            raise  # hypothesis gave this example up (overrun, assume()): not a case
        except BaseException:
            CASES[key] += 1  # a failing case is a case
            raise
        CASES[key] += 1
        return result

    return wrapper


def fuzz_settings(max_examples: int, **overrides: Any) -> settings:
    """The fuzz profile with this property's ``max_examples`` (or ``$CCWIRE_FUZZ_EXAMPLES``)."""
    env = os.environ.get(ENV_EXAMPLES, "").strip()
    n = int(env) if env else max_examples
    return settings(settings.get_profile(PROFILE), max_examples=n, **overrides)


# --------------------------------------------------------------------------- JSON values

# Text that stresses encoders: ASCII, control characters, multi-byte UTF-8 (2, 3 and
# 4 bytes), U+2028/U+2029 and the BOM, but never a lone surrogate.
_TRICKY = st.sampled_from(
    ["", " ", "\n", "\r\n", "\t", "\x00", "\x7f", '"', "\\", "é", "€", "\u2028", "\u2029",
     "\ufeff", "😀", "𝄞", "日本語", "\U0010ffff"]
)  # fmt: skip
json_text = st.one_of(st.text(max_size=12), _TRICKY)

json_keys = st.one_of(st.text(max_size=8), _TRICKY)

json_scalars: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    json_text,
)
"""Scalars ``json.dumps(..., allow_nan=False)`` can write and ``json.loads`` reads back equal."""


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(json_keys, children, max_size=4),
    )


json_values: st.SearchStrategy[Any] = st.recursive(json_scalars, _containers, max_leaves=16)
"""Any JSON-representable value (finite floats, str keys)."""

wire_scalars: st.SearchStrategy[Any] = st.one_of(
    json_scalars,
    st.sampled_from([float("nan"), float("inf"), float("-inf")]),
    # Integers up to 300 digits: json.loads reads them, and float() still takes them.
    st.integers(min_value=-(10**300), max_value=10**300),
)
"""Everything ``json.loads`` can produce for a scalar of a CLI line (NaN/Infinity too).

Integers beyond the float range are left out on purpose: see the codec's xfail test."""

wire_values: st.SearchStrategy[Any] = st.recursive(wire_scalars, _containers, max_leaves=16)
"""Any value ``json.loads`` can return (given the integer caveat above)."""
