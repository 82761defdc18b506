"""Errors of the transcript helpers.

Each also derives from the builtin the reference SDK raises in the same case
(`ValueError`, `FileNotFoundError`), so code catching those keeps working.
"""

from __future__ import annotations

from ..._core.errors import CcwireError

__all__ = ["SessionNotFoundError", "TranscriptArgumentError"]


class TranscriptArgumentError(CcwireError, ValueError):
    """A bad argument: not a UUID, an empty title or tag, nothing to fork."""


class SessionNotFoundError(CcwireError, FileNotFoundError):
    """No transcript with that session id exists where it was looked for."""
