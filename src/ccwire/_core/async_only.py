"""`AsyncWithOnly`: a plain ``with`` on an async context manager says to use ``async with``."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

__all__ = ["AsyncWithOnly"]


class AsyncWithOnly:
    """A base for an async context manager that a plain ``with`` must not enter.

    ``with ClaudeSDKClient(options):`` would fail with Python's ``TypeError: ... does not
    support the context manager protocol``; this base makes it a ``TypeError`` saying how
    to enter it instead. A subclass names that in ``_ASYNC_WITH``.
    """

    __slots__ = ()

    _ASYNC_WITH: ClassVar[str]
    """How to enter it, for example ``"async with ClaudeSDKClient(options) as client:"``."""

    if not TYPE_CHECKING:  # at run time only: to mypy, a plain `with` stays an error

        def __enter__(self) -> None:
            raise TypeError(
                f"{type(self).__name__} is an async context manager: use "
                f"`{self._ASYNC_WITH}` inside an `async def`"
            )

        def __exit__(self, *exc_info: object) -> None:  # never reached: __enter__ raised
            return None
