"""The CLI's environment, built as ``claude-agent-sdk`` builds it.

`build_env()` layers what ``inherit_env`` lets through from the caller's
environment (by default everything but ``CLAUDECODE``; see `inherited_env()`), the
SDK's own variables and ``options.env``. The result goes to the process's environment,
never to its command line. Pure: nothing here reads ``os.environ`` itself; callers pass
it as ``base_env``.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Mapping

from .._core.errors import OptionsError
from .._version import __version__
from .argv import tool_config_env
from .options import ClaudeAgentOptions, normalize_inherit_env

__all__ = ["build_env", "inherited_env", "sdk_version"]


@functools.lru_cache(maxsize=1)
def sdk_version() -> str:
    """ccwire's version (read from the package, not from installed metadata: fast)."""
    return __version__


_NEVER_INHERITED = frozenset({
    "CLAUDECODE",  # would tell the CLI that it runs inside Claude Code
    "CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP",  # an outer SDK session's label, not this one's
})  # fmt: skip


_WILDCARDS = frozenset("*?[")


@functools.lru_cache(maxsize=16)
def _env_matcher(patterns: tuple[str, ...], ignore_case: bool) -> Callable[[str], bool]:
    """A predicate for variable names matching any of ``patterns`` (shell-style).

    Plain names and ``PREFIX*`` patterns (all of the default list) are a set lookup
    and a ``startswith``; only other patterns are compiled into a regular expression
    (compiling the whole default list cost milliseconds at the first connect).
    """
    fold = str.upper if ignore_case else str
    exact: set[str] = set()
    prefixes: list[str] = []
    others: list[str] = []
    for p in patterns:
        if not _WILDCARDS.intersection(p):
            exact.add(fold(p))
        elif p.endswith("*") and not _WILDCARDS.intersection(p[:-1]):
            prefixes.append(fold(p[:-1]))
        else:
            others.append(p)
    starts = tuple(prefixes)
    regex = (
        re.compile(
            "|".join(f"(?:{fnmatch.translate(p)})" for p in others),
            re.IGNORECASE if ignore_case else 0,
        )
        if others
        else None
    )

    def matches(name: str) -> bool:
        key = fold(name)
        if key in exact or key.startswith(starts):
            return True
        return regex is not None and regex.fullmatch(name) is not None

    return matches


def inherited_env(
    base_env: Mapping[str, str], inherit: object, *, ignore_case: bool = os.name == "nt"
) -> dict[str, str]:
    """The part of ``base_env`` the CLI inherits under ``inherit`` (``inherit_env``).

    ``True``: everything; ``False``: nothing; else the variables whose names match one
    of the names or shell-style patterns (case-insensitively by default on Windows,
    where variable names are). ``CLAUDECODE`` (and an outer SDK session's
    ``CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP``) is never inherited.
    """
    inherit = normalize_inherit_env(inherit)
    if inherit is False:
        return {}
    if inherit is True:
        return {k: v for k, v in base_env.items() if k not in _NEVER_INHERITED}
    matches = _env_matcher(inherit, ignore_case)
    return {k: v for k, v in base_env.items() if k not in _NEVER_INHERITED and matches(k)}


def build_env(options: ClaudeAgentOptions, *, base_env: Mapping[str, str]) -> dict[str, str]:
    """The subprocess environment, layered later-wins.

    The variables of ``base_env`` that ``options.inherit_env`` selects (never
    ``CLAUDECODE``; see `inherited_env()`); ``CLAUDE_CODE_ENTRYPOINT=sdk-py``;
    ``options.env``; then ``CLAUDE_AGENT_SDK_VERSION`` (not overridable),
    ``CLAUDE_AGENT_SDK_CLIENT_APP`` (with ``client_app``),
    ``CLAUDE_CODE_SDK_READS_SESSION_STATE=1`` (unless already set),
    ``CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING=true`` (when enabled) and ``PWD``
    (when ``cwd`` is set). Error messages name offending keys, never values.

    Raises:
        OptionsError: An entry of ``options.env`` is not ``str -> str``, its name no
            process environment can hold (empty, with ``=`` or NUL), or its value
            holds NUL; or either holds a lone surrogate (one that is no undecodable
            byte: ``os.fsencode`` refuses it).
    """
    env = inherited_env(base_env, options.inherit_env)
    env["CLAUDE_CODE_ENTRYPOINT"] = "sdk-py"
    for key, value in options.env.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise OptionsError(
                f"env entries must be str -> str, got {key!r}: {type(value).__name__}"
            )
        if not key or "=" in key or "\0" in key:
            raise OptionsError(
                f"env: {key!r} cannot be an environment variable's name (empty, or holding "
                "'=' or a NUL character)"
            )
        if "\0" in value:
            raise OptionsError(f"env: the value of {key!r} holds a NUL character")
        try:
            os.fsencode(key + value)
        except UnicodeEncodeError:
            raise OptionsError(
                f"env: {key!r} or its value holds a lone surrogate, which no process "
                "environment can hold"
            ) from None
        env[key] = value
    env["CLAUDE_AGENT_SDK_VERSION"] = sdk_version()
    if options.client_app:
        env["CLAUDE_AGENT_SDK_CLIENT_APP"] = options.client_app
    env.setdefault("CLAUDE_CODE_SDK_READS_SESSION_STATE", "1")
    if options.enable_file_checkpointing:
        env["CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"] = "true"
    env.update(tool_config_env(options))  # CLAUDE_CODE_QUESTION_PREVIEW_FORMAT
    if options.cwd is not None:
        env["PWD"] = str(options.cwd)
    return env
