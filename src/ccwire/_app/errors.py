"""The command line's own failures, in a module that imports nothing heavy: `main`
classifies them (exit code, hint) without loading the commands that raise them."""

from __future__ import annotations

import argparse
import shlex
from typing import IO

from .._core.errors import CcwireError

__all__ = [
    "AUTH_HINT",
    "AuthMissingError",
    "DropInError",
    "ReportWriteError",
    "SessionsCommandError",
    "Terminated",
    "UsageError",
    "auth_hint",
    "read_text",
    "utf8_options",
    "utf8_text",
]


def auth_hint(cli: str | None = None) -> str:
    """What to do without credentials: set a key, log in with the CLI, or run offline.

    Args:
        cli: The Claude Code executable found, if known: the login line names it (the
            CLI installed in ``~/.ccwire/cli`` is not on ``PATH``, so ``claude`` alone
            may not run).
    """
    login = (
        f"run `{shlex.quote(cli)}` and type /login"
        if cli
        else "run the Claude Code CLI (`ccwire --version` shows where it is) and type /login"
    )
    return (
        f"export ANTHROPIC_API_KEY=sk-ant-... (or log in: {login}); "
        "without one, run offline: `ccwire demo`, `ccwire run --offline ...`"
    )


AUTH_HINT = auth_hint()
"""`auth_hint()` where the CLI's path is not at hand."""


class UsageError(CcwireError, ValueError):
    """The command line is wrong (exit code 2); the message says how."""


def utf8_text(text: str, what: str) -> str:
    """``text`` (a command-line argument, or what was read from stdin) if it is valid
    UTF-8 text.

    Bytes that are not UTF-8 reach Python as lone surrogates (``surrogateescape``),
    which no JSON frame to the CLI can carry.

    Raises:
        UsageError: It is not, naming ``what`` and the first bad byte.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = ord(text[exc.start])
        bad = f"byte 0x{char - 0xDC00:02x}" if 0xDC80 <= char <= 0xDCFF else f"{chr(char)!a}"
        raise UsageError(
            f"{what} is not valid UTF-8 text ({bad} at character {exc.start + 1})"
        ) from None
    return text


def utf8_options(args: argparse.Namespace, *names: str) -> None:
    """Check that the options ``names`` of ``args`` (each a value, a list of them, or
    ``None``; ``"system_prompt"`` is ``--system-prompt``) are valid UTF-8 text.

    Raises:
        UsageError: One is not (see `utf8_text`).
    """
    for name in names:
        value = getattr(args, name, None)
        for item in value if isinstance(value, list) else [value]:
            if item is not None:
                utf8_text(item, "--" + name.replace("_", "-"))


def read_text(stream: IO[str], what: str) -> str:
    """All of ``stream`` (stdin) as valid UTF-8 text (see `utf8_text`).

    Raises:
        UsageError: It is not.
    """
    try:
        text = stream.read()
    except UnicodeDecodeError as exc:  # a stream that decodes strictly
        raise UsageError(
            f"{what} is not valid UTF-8 text (byte 0x{exc.object[exc.start]:02x} at byte "
            f"{exc.start + 1})"
        ) from None
    return utf8_text(text, what)


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


class ReportWriteError(_HintedError):
    """The ``--report`` page of a batch, or its progress on standard output, could not
    be written once the batch had begun (a full disk, say): the batch went on, its
    results are all in the results file, and the command exits non-zero.

    Attributes:
        hint: How to draw the page once the cause is fixed.
    """
