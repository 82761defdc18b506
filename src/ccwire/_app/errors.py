"""The command line's own failures, in a module that imports nothing heavy: `main`
classifies them (exit code, hint) without loading the commands that raise them."""

from __future__ import annotations

from .._core.errors import CcwireError

__all__ = [
    "AUTH_HINT",
    "AuthMissingError",
    "DropInError",
    "SessionsCommandError",
    "Terminated",
    "UsageError",
]

AUTH_HINT = (
    "export ANTHROPIC_API_KEY=sk-ant-... (or log in with `claude /login`); "
    "without one, run offline: `ccwire demo`, `ccwire run --offline ...`"
)


class UsageError(CcwireError, ValueError):
    """The command line is wrong (exit code 2); the message says how."""


class Terminated(KeyboardInterrupt):
    """SIGTERM stopped the command (exit code 143): it ends as Ctrl-C does, CLI stopped
    and nothing left running, with ``ccwire: error: terminated (SIGTERM)``."""


class AuthMissingError(CcwireError):
    """No credentials for the real model were found (``ccwire run`` exit code 4)."""


class _HintedError(CcwireError):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class SessionsCommandError(_HintedError):
    """`ccwire sessions` or `show` cannot do what was asked.

    Attributes:
        hint: How to fix it, for the `ccwire: hint:` line.
    """


class DropInError(_HintedError):
    """The drop-in cannot be installed or removed here.

    Attributes:
        hint: How to fix it, for the `ccwire: hint:` line.
    """
