"""Secret redaction, in one place: by key name and by the shape of the value.

ccwire masks secrets wherever it writes or shows data it did not make up itself: the
audit log, ``repr(ClaudeAgentOptions)``, the messages of its errors and its log
records. Two rules, used together:

* **By key**: a value stored under a secret-looking name is masked whole, at any
  depth. A name is split into words (``clientSecret``, ``x-api-key``,
  ``AWS_SECRET_ACCESS_KEY``) and is secret when a word is one of `SECRET_WORDS`
  (``password``, ``pwd``, ``secret``, ``token``, ``bearer``, ``cookie``...) or two
  neighbouring words make one of `SECRET_PAIRS` (``api key``, ``private key``...).
  ``max_tokens`` or ``input_tokens`` are not secrets: words are compared whole.
* **By shape**: in any text, well-known credential formats are masked: Anthropic
  (``sk-ant-...``) and other ``sk-`` keys, GitHub tokens (``ghp_...``,
  ``github_pat_...``), AWS access key ids (``AKIA...``), Slack tokens, Google API keys,
  JWTs, ``Bearer``/``Basic`` credentials, the password of a URL
  (``https://user:***@host``), secret query parameters (``?token=``, ``?key=``) and
  ``name=value`` / ``"name": "value"`` pairs whose name is secret.

Masking cannot be perfect: a secret with no telltale name or shape passes. It is a
safety net, not a reason to put secrets where they would be shown.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Mapping
from functools import cache
from typing import Any, Final

__all__ = [
    "MASK",
    "SECRET_PAIRS",
    "SECRET_WORDS",
    "RedactingFilter",
    "install_log_filter",
    "is_secret_key",
    "redact_text",
    "redact_value",
]

MASK: Final = "***"
"""What a secret is replaced with."""

SECRET_WORDS: Final[frozenset[str]] = frozenset(
    {
        "password", "passwd", "pwd", "passphrase", "secret", "secrets", "token",
        "apikey", "auth", "authorization", "bearer", "cookie", "cookies", "credential",
        "credentials", "privatekey", "sessionkey", "signature", "jwt",
    }
)  # fmt: skip
"""Words that make a key name secret (``db_password``, ``clientSecret``, ``id_token``)."""

SECRET_PAIRS: Final[frozenset[tuple[str, str]]] = frozenset(
    {
        ("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key"),
        ("signing", "key"), ("encryption", "key"), ("master", "key"), ("session", "key"),
        ("client", "key"), ("auth", "key"),
    }
)  # fmt: skip
"""Neighbouring words that make a key name secret (``x-api-key``, ``ANTHROPIC_API_KEY``)."""


_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_WORD: Final = re.compile(r"[^a-z0-9]+")


def _words(key: str) -> list[str]:
    return [w for w in _NON_WORD.split(_CAMEL.sub("_", key).lower()) if w]


def is_secret_key(key: object) -> bool:
    """Whether a value stored under ``key`` should be masked (see the module docs).

    Args:
        key: a mapping key, header name, variable or parameter name.

    Returns:
        True for names such as ``password``, ``x-api-key``, ``clientSecret``.
    """
    words = _words(str(key))
    if any(w in SECRET_WORDS for w in words):
        return True
    return any(pair in SECRET_PAIRS for pair in itertools.pairwise(words))


# In free text. Each pattern masks its last group (or the whole match when it has none).
# (found by its last word: ``db_password``, ``X-Api-Key``; searching for the word itself,
# not for a prefix, keeps every pattern linear in the length of the text)
_KEYWORD: Final = (
    r"(?:password|passwd|pwd|passphrase|secret|token|api[_-]?key|"
    r"apikey|authorization|auth|bearer|cookie|credentials?|private[_-]?key|access[_-]?key)"
)


# Every pattern below without ``:`` or ``=`` in it matches at least this many characters
# ("basic " and 8 more); a shorter text with neither character cannot hold a secret.
_SHORTEST: Final = 14


@cache
def _shapes() -> tuple[re.Pattern[str], ...]:
    """The patterns, compiled on first use (2 ms): importing ccwire stays cheap."""
    return (
        # a URL's password: scheme://user:PASSWORD@host
        re.compile(
            r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://[^/\s:@]{0,256}:([^/\s@]{1,256})@"
        ),
        # name=value or "name": "value" with a secret name (also in headers: "X-Api-Key: v");
        # not a path's last part ("/etc/passwd: not a directory")
        re.compile(
            r"(?i)(?<![/\\])" + _KEYWORD + r"(?:[_.-]?(?:key|value|string|str|b64|hash))?"
            r"(?![A-Za-z0-9])[\"']?\s*[:=]\s*"
            r"(?:\"([^\"\n]{0,1024})\"|'([^'\n]{0,1024})'|((?:(?:bearer|basic|token)\s+)?[^\s\"',;&}\]]+))"
        ),
        # secret query parameters: ?token=..., &key=...
        re.compile(
            r"(?i)[?&;](?:[a-z0-9_.-]{0,32}?(?:token|secret|password|passwd|pwd|api[_-]?key|apikey|"
            r"auth|signature|credential)[a-z0-9_.-]{0,32}|key|sig|code|pass)=([^&#\s\"']+)"
        ),
        re.compile(r"(?i)\b(?:bearer|basic)\s+([A-Za-z0-9._~+/=-]{8,})"),
        re.compile(r"\bsk-ant-[A-Za-z0-9_-]{8,}"),
        re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}"),
        re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}"),
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
        re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        re.compile(r"\bAIza[0-9A-Za-z_-]{35}"),
        re.compile(
            r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"
        ),
        re.compile(
            r"-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[\s\S]*?"
            r"(?:-----END [A-Z ]{0,40}PRIVATE KEY-----|$)"
        ),
    )


def _masker(mask: str) -> Any:
    def replace(m: re.Match[str]) -> str:
        if m.lastindex is None:
            return mask
        if m.group(m.lastindex) == mask:
            return m.group(0)
        start, end = m.span(m.lastindex)
        return m.string[m.start() : start] + mask + m.string[end : m.end()]

    return replace


def redact_text(text: str, *, mask: str = MASK) -> str:
    """``text`` with every secret-shaped part masked (see the module docs).

    Args:
        text: any text: a message, a URL, a command line, JSON.
        mask: the replacement.

    Returns:
        The text with secrets replaced by ``mask``; the same object when nothing matched.
    """
    if not isinstance(text, str) or not text:
        return text
    if len(text) < _SHORTEST and ":" not in text and "=" not in text:
        return text  # no pattern can match (and none is compiled): names, ids, flags
    replace = _masker(mask)
    out = text
    for pattern in _shapes():
        out = pattern.sub(replace, out)
    return text if out == text else out


def redact_value(value: Any, *, mask: str = MASK) -> Any:
    """``value`` with secrets masked: mapping values under secret keys whole, strings by
    shape, walking dicts, lists and tuples at any depth.

    Args:
        value: JSON-like data (other objects are returned as they are).
        mask: the replacement.

    Returns:
        A masked copy (containers are rebuilt; other values returned as they are).
    """
    if isinstance(value, str):
        return redact_text(value, mask=mask)
    if isinstance(value, Mapping):
        return {
            k: (mask if v is not None else None) if is_secret_key(k) else redact_value(v, mask=mask)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_value(v, mask=mask) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that masks secrets in a record's message and traceback.

    The message is formatted with its arguments first, so a secret passed as an
    argument is masked too; the traceback text is formatted and masked once, and the
    handler's formatter reuses it.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: leave it to the handler to report
            return True
        masked = redact_text(message)
        if masked is not message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True


_FILTER: Final = RedactingFilter()


def install_log_filter(logger: logging.Logger | None = None) -> None:
    """Add the `RedactingFilter` to ``logger`` (default: the ``ccwire`` logger), once."""
    target = logger or logging.getLogger("ccwire")
    if _FILTER not in target.filters:
        target.addFilter(_FILTER)
