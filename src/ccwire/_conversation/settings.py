"""`resolve_settings()`: the settings a session would see, merged by the CLI's own engine.

The TypeScript SDK bundles the CLI's settings code; ccwire does not, so it asks the CLI:
it starts it with the given options, asks ``get_settings`` right after ``initialize`` (no
prompt, no model request) and stops it. What comes back is the merge a session started
with the same options would see.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import _core  # its Path: pathlib loads with the first get_type_hints()
from .client import ClaudeSDKClient
from .option_types import SettingSource
from .options import ClaudeAgentOptions

__all__ = [
    "ResolvedSettingSource",
    "ResolvedSettings",
    "SettingsSourceEntry",
    "filter_escalating_default_mode",
    "resolve_settings",
]

ResolvedSettingSource = Literal["user", "project", "local", "flag", "managed"]
"""Where a setting came from: a `SettingSource`, ``flag`` (``settings``, ``--settings``) or
``managed`` (the policy tier: managed-settings files, ``managed_settings``)."""

_SOURCE_NAMES: Mapping[str, ResolvedSettingSource] = {
    "userSettings": "user",
    "projectSettings": "project",
    "localSettings": "local",
    "flagSettings": "flag",
    "policySettings": "managed",
}


@dataclass(frozen=True)
class SettingsSourceEntry:
    """One settings source, as the CLI read it.

    Attributes:
        source: Which (`ResolvedSettingSource`; another name the CLI gives is kept).
        settings: What it holds.
    """

    source: str
    settings: Mapping[str, Any]


@dataclass(frozen=True)
class ResolvedSettings:
    """What `resolve_settings()` returns.

    Attributes:
        effective: The merged settings, every enabled source applied in order.
        provenance: For each top-level key of ``effective``, the source that gave it
            (the last one, by precedence, that sets it).
        sources: Each source's own settings, lowest precedence first.
        raw: The CLI's whole answer (``applied``: the values in force, ...).
    """

    effective: Mapping[str, Any]
    provenance: Mapping[str, str]
    sources: tuple[SettingsSourceEntry, ...]
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def _decode(answer: Mapping[str, Any]) -> ResolvedSettings:
    effective = answer.get("effective")
    effective = effective if isinstance(effective, Mapping) else {}
    sources = tuple(
        SettingsSourceEntry(
            source=_SOURCE_NAMES.get(str(s.get("source")), str(s.get("source"))),
            settings=s["settings"] if isinstance(s.get("settings"), Mapping) else {},
        )
        for s in answer.get("sources") or ()
        if isinstance(s, Mapping)
    )
    provenance: dict[str, str] = {}
    for key in effective:
        for entry in reversed(sources):
            if key in entry.settings:
                provenance[key] = entry.source
                break
    return ResolvedSettings(effective, provenance, sources, raw=answer)


async def resolve_settings(
    *,
    cwd: str | _core.Path | None = None,
    setting_sources: list[SettingSource] | None = None,
    managed_settings: Mapping[str, Any] | None = None,
    settings: str | Mapping[str, Any] | None = None,
    cli_path: str | _core.Path | None = None,
    env: Mapping[str, str] | None = None,
) -> ResolvedSettings:
    """The settings a session started with these options would see, merged by the CLI.

    Needs no session of yours: the CLI is started for this call only (no prompt, no
    model request, nothing written to disk), as the TypeScript SDK's ``resolveSettings``
    uses the same merge engine.

    Example:
        ```python
        from ccwire import resolve_settings

        resolved = await resolve_settings(cwd="/repo", setting_sources=["user", "project"])
        print(resolved.effective.get("model"), resolved.provenance.get("model"))
        ```

    Args:
        cwd: The directory whose project and local settings count. Default: this
            process's working directory.
        setting_sources: Which filesystem sources to read. Default: all three, as the
            CLI does (``[]`` reads none; the managed tier is always read).
        managed_settings: Policy-tier settings of an embedding application, as the
            ``managed_settings`` option.
        settings: The ``settings`` option: a settings file's path, JSON text, or a dict.
        cli_path: The ``claude`` executable (as the option).
        env: More variables for the CLI (``HOME``, ``CLAUDE_CONFIG_DIR``, ...).

    Returns:
        The merged settings, where each top-level key came from, and every source.

    Raises:
        CLINotFoundError: No CLI to ask.
        CcwireError: The CLI failed to start or to answer.
    """
    sources: list[SettingSource] = (
        ["user", "project", "local"] if setting_sources is None else list(setting_sources)
    )
    options = ClaudeAgentOptions(
        cwd=os.fspath(cwd) if cwd is not None else None,
        setting_sources=sources,
        managed_settings=dict(managed_settings) if managed_settings is not None else None,
        settings=settings,
        cli_path=cli_path,
        env=dict(env or {}),
        persist_session=False,
    )
    async with ClaudeSDKClient(options) as client:
        snapshot = await client.get_settings()
    return _decode(snapshot.raw)


_ESCALATING = frozenset({"bypassPermissions", "auto", "acceptEdits"})
_FROM_LOCAL_TOO = frozenset({"bypassPermissions", "auto"})


def filter_escalating_default_mode(resolved: ResolvedSettings) -> Mapping[str, Any]:
    """``resolved.effective`` without a ``permissions.defaultMode`` that the CLI would not
    honour: an escalating mode (``bypassPermissions``, ``auto``, ``acceptEdits``) set by a
    file committed to the repository (``project``; for the first two also ``local``).

    Args:
        resolved: What `resolve_settings()` returned.

    Returns:
        The effective settings, that mode removed if it must be.
    """
    effective = resolved.effective
    permissions = effective.get("permissions")
    mode = permissions.get("defaultMode") if isinstance(permissions, Mapping) else None
    if mode not in _ESCALATING or not isinstance(permissions, Mapping):
        return effective
    distrusted = {"project", "local"} if mode in _FROM_LOCAL_TOO else {"project"}
    for entry in reversed(resolved.sources):
        own = entry.settings.get("permissions")
        if isinstance(own, Mapping) and "defaultMode" in own:
            if entry.source not in distrusted:
                return effective
            kept = {k: v for k, v in permissions.items() if k != "defaultMode"}
            return {**effective, "permissions": kept}
    return effective
