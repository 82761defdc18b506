"""`AsyncWithOnly`: a plain ``with`` on an async context manager says to use ``async with``.

It raises `AsyncOnlyError` (also a `TypeError`, as Python's own) where Python would say
only that the object "does not support the context manager protocol".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from .errors import AsyncOnlyError

__all__ = ["AsyncWithOnly"]


def _async_only(what: str, use: str) -> AsyncOnlyError:
    """The error for ``what`` used without ``async``: write ``use`` instead."""
    return AsyncOnlyError(
        f"{what}: use `{use}` inside an `async def`, run with `anyio.run(main)` or "
        "`asyncio.run(main())`"
    )


class AsyncWithOnly:
    """A base for an async context manager that a plain ``with`` must not enter.

    ``with ClaudeSDKClient(options):`` would fail with Python's ``TypeError: ... does not
    support the context manager protocol``; this base makes it an `AsyncOnlyError`
    saying how to enter it instead. A subclass names that in ``_ASYNC_WITH``.
    """

    __slots__ = ()

    _ASYNC_WITH: ClassVar[str]
    """How to enter it, for example ``"async with ClaudeSDKClient(options) as client:"``."""

    if not TYPE_CHECKING:  # at run time only: to mypy, a plain `with` stays an error

        def __enter__(self) -> None:
            raise _async_only(
                f"{type(self).__name__} is an async context manager", self._ASYNC_WITH
            )

        def __exit__(self, *exc_info: object) -> None:  # never reached: __enter__ raised
            return None
