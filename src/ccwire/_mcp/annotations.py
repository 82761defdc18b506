"""`ToolAnnotations`: a tool's behaviour hints, in either spelling, and their wire form.

The MCP spelling of each hint is camelCase (``readOnlyHint``); Python code usually
writes snake_case (``read_only_hint``). Both are accepted everywhere annotations are
taken: this class, a plain mapping, or an object with ``model_dump()`` such as
``mcp.types.ToolAnnotations``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final

from .._core.errors import ToolDefinitionError

__all__ = ["ToolAnnotations", "read_annotations"]

# snake_case attribute name -> wire (camelCase) name, in wire order
_HINTS: Final = {
    "title": "title",
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
    "max_result_size_chars": "maxResultSizeChars",
}
_SNAKE: Final = {wire: snake for snake, wire in _HINTS.items()}
_BOOL_HINTS: Final = frozenset(
    {"read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"}
)
MAX_RESULT_META_KEY: Final = "anthropic/maxResultSizeChars"
"""The ``_meta`` key that tells Claude Code how large a result it keeps inline."""


class ToolAnnotations:
    """Hints about a tool's behaviour, sent in ``tools/list``.

    Every hint takes either spelling: ``ToolAnnotations(read_only_hint=True)`` and
    ``ToolAnnotations(readOnlyHint=True)`` are equal, and each hint reads under both
    names (``a.read_only_hint`` and ``a.readOnlyHint``). Keyword names MCP may add
    later are kept as extras and sent as given.

    With ``read_only_hint=True`` the Claude Code CLI runs several calls of the tool
    *concurrently* when the model asks for them in one turn (otherwise one after
    another), so only set it for handlers that are safe to overlap.
    ``max_result_size_chars`` (``maxResultSizeChars``) is a Claude Code hint, not an
    MCP one: the size in characters up to which the CLI keeps this tool's result inline
    instead of saving it to a file and showing a preview. It also travels in the
    tool's ``_meta`` as ``anthropic/maxResultSizeChars``.

    Annotations are hints for the client, not a security mechanism: nothing enforces
    them, and clients must not trust them from untrusted servers.

    Args:
        title: A human-readable title for the tool.
        read_only_hint: The tool does not change its environment.
        destructive_hint: The tool may destroy or overwrite data.
        idempotent_hint: Calling it twice with the same input has no further effect.
        open_world_hint: The tool reaches outside entities (the web, other systems).
        max_result_size_chars: Claude Code keeps results up to this size inline.
        **extra: The camelCase spellings of the above, or hints not listed here.

    Raises:
        ToolDefinitionError: A hint of the wrong type, or one hint given twice with
            different values.
    """

    __slots__ = ("_extra", "_values")
    _values: dict[str, Any]
    _extra: Mapping[str, Any]

    def __init__(
        self,
        title: str | None = None,
        read_only_hint: bool | None = None,
        destructive_hint: bool | None = None,
        idempotent_hint: bool | None = None,
        open_world_hint: bool | None = None,
        max_result_size_chars: int | None = None,
        **extra: Any,
    ) -> None:
        given = {
            "title": title, "read_only_hint": read_only_hint,
            "destructive_hint": destructive_hint, "idempotent_hint": idempotent_hint,
            "open_world_hint": open_world_hint, "max_result_size_chars": max_result_size_chars,
        }  # fmt: skip
        others: dict[str, Any] = {}
        for key, value in extra.items():
            snake = _SNAKE.get(key)
            if snake is None:
                others[key] = value
            elif given[snake] is not None and value is not None and given[snake] != value:
                raise ToolDefinitionError(
                    f"ToolAnnotations: {snake}={given[snake]!r} and {key}={value!r} disagree"
                )
            elif value is not None:
                given[snake] = value
        for name, value in given.items():
            _check(name, value)
        object.__setattr__(self, "_values", given)
        object.__setattr__(self, "_extra", MappingProxyType(others))

    # ------------------------------------------------------------------ reading

    @property
    def title(self) -> str | None:
        """A human-readable title for the tool."""
        return self._values["title"]  # type: ignore[no-any-return]

    @property
    def read_only_hint(self) -> bool | None:
        """The tool does not change its environment."""
        return self._values["read_only_hint"]  # type: ignore[no-any-return]

    @property
    def destructive_hint(self) -> bool | None:
        """The tool may destroy or overwrite data."""
        return self._values["destructive_hint"]  # type: ignore[no-any-return]

    @property
    def idempotent_hint(self) -> bool | None:
        """Calling the tool twice with the same input has no further effect."""
        return self._values["idempotent_hint"]  # type: ignore[no-any-return]

    @property
    def open_world_hint(self) -> bool | None:
        """The tool reaches outside entities."""
        return self._values["open_world_hint"]  # type: ignore[no-any-return]

    @property
    def max_result_size_chars(self) -> int | None:
        """Claude Code keeps results of the tool up to this size inline."""
        return self._values["max_result_size_chars"]  # type: ignore[no-any-return]

    # the wire spellings, for code written against MCP's own model
    @property
    def readOnlyHint(self) -> bool | None:
        """Same as `read_only_hint`."""
        return self.read_only_hint

    @property
    def destructiveHint(self) -> bool | None:
        """Same as `destructive_hint`."""
        return self.destructive_hint

    @property
    def idempotentHint(self) -> bool | None:
        """Same as `idempotent_hint`."""
        return self.idempotent_hint

    @property
    def openWorldHint(self) -> bool | None:
        """Same as `open_world_hint`."""
        return self.open_world_hint

    @property
    def maxResultSizeChars(self) -> int | None:
        """Same as `max_result_size_chars`."""
        return self.max_result_size_chars

    @property
    def extra(self) -> Mapping[str, Any]:
        """Hints given under names this class does not know, sent as given."""
        return self._extra

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._extra[name]
        except KeyError:
            raise AttributeError(name) from None

    # ------------------------------------------------------------------ wire form

    def to_dict(self) -> dict[str, Any]:
        """The ``annotations`` of the tool's ``tools/list`` entry: camelCase keys, unset
        hints left out. ``maxResultSizeChars`` is not among them: it travels in the
        tool's ``_meta`` (see `meta()`)."""
        wire = {
            _HINTS[k]: v
            for k, v in self._values.items()
            if v is not None and k != "max_result_size_chars"
        }
        wire.update((k, v) for k, v in self._extra.items() if v is not None)
        return wire

    def meta(self) -> dict[str, Any]:
        """The entries these hints add to the tool's ``_meta``."""
        size = self.max_result_size_chars
        return {} if size is None else {MAX_RESULT_META_KEY: size}

    def model_dump(
        self, *, by_alias: bool | None = None, exclude_none: bool = False, **_: Any
    ) -> dict[str, Any]:
        """The hints as a dict, like a pydantic model's ``model_dump()``.

        Args:
            by_alias: camelCase keys (the wire names) instead of snake_case ones.
            exclude_none: Leave out hints that are not set.
            **_: Other pydantic options, accepted and ignored.

        Returns:
            One entry per hint (and per extra).
        """
        out = {(_HINTS[k] if by_alias else k): v for k, v in self._values.items()}
        out.update(self._extra)
        return {k: v for k, v in out.items() if v is not None} if exclude_none else out

    # ------------------------------------------------------------------ value object

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"ToolAnnotations is immutable: cannot set {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolAnnotations):
            return NotImplemented
        return self._all() == other._all()

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, repr(v)) for k, v in self._all().items())))

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        return _rebuild, (self._all(),)

    def _all(self) -> dict[str, Any]:
        return {
            **self.to_dict(),
            **{_HINTS[k]: v for k, v in self._values.items() if v is not None},
        }

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        """The set hints as ``(wire name, value)`` pairs."""
        return iter(self._all().items())

    def __repr__(self) -> str:
        parts = [f"{k}={v!r}" for k, v in self._values.items() if v is not None]
        parts += [f"{k}={v!r}" for k, v in self._extra.items()]
        return f"ToolAnnotations({', '.join(parts)})"


def _rebuild(wire: dict[str, Any]) -> ToolAnnotations:
    return ToolAnnotations(**wire)


def _check(name: str, value: Any) -> None:
    if value is None:
        return
    if name in _BOOL_HINTS and not isinstance(value, bool):
        raise ToolDefinitionError(f"ToolAnnotations: {name} must be a bool, not {value!r}")
    if name == "title" and not isinstance(value, str):
        raise ToolDefinitionError(f"ToolAnnotations: title must be a string, not {value!r}")
    if name == "max_result_size_chars" and (
        isinstance(value, bool) or not isinstance(value, int) or value <= 0
    ):
        raise ToolDefinitionError(
            f"ToolAnnotations: max_result_size_chars must be a positive int, not {value!r}"
        )


def read_annotations(value: Any) -> ToolAnnotations | None:
    """A tool's ``annotations`` as `ToolAnnotations`.

    Takes a `ToolAnnotations`, a mapping with camelCase or snake_case keys, or an
    object with ``model_dump()`` (``mcp.types.ToolAnnotations`` and subclasses).

    Raises:
        ToolDefinitionError: Anything else, or a hint of the wrong type.
    """
    if value is None or isinstance(value, ToolAnnotations):
        return value
    if isinstance(value, Mapping):
        items = {str(k): v for k, v in value.items()}
    elif callable(getattr(value, "model_dump", None)):
        try:
            items = value.model_dump(by_alias=True, exclude_none=True)
        except TypeError:  # a model_dump() without pydantic's options
            items = value.model_dump()
    else:
        raise ToolDefinitionError(f"annotations must be ToolAnnotations or a mapping: {value!r}")
    return ToolAnnotations(**items)
