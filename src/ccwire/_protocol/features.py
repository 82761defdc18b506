"""What the connected Claude Code CLI supports: its capabilities and version.

`CliFeatures` learns them from the ``initialize`` answer and every
``system/init``; the request layer asks it before sending a capability-gated field
and turns a CLI's "unsupported subtype" answer into `UnsupportedFeatureError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, get_args

from .._core.errors import ControlProtocolError, UnsupportedFeatureError
from .._wire.hook_types import HookEvent
from .._wire.messages import Message, SystemMessage

__all__ = ["CliFeatures", "unsupported_error"]

# Capabilities (system/init ``capabilities``) that gate request fields.
CAP_INTERRUPT_CANCEL_QUEUED = "interrupt_cancel_queued_v1"
CAP_MCP_READ_RESOURCE = "mcp_read_resource_v1"
CAP_MCP_CALL_NOT_FOR_MODEL = "mcp_call_result_not_for_model_v1"
CAP_MCP_CALL_CHECK_PERMISSIONS = "mcp_call_check_permissions_v1"
CAP_MCP_CALL_SOFT_ERROR = "mcp_call_soft_error_result_v1"
CAP_RELOAD_REFUSE_IF_BUSY = "reload_plugins_refuse_if_busy_v1"
CAP_SDK_MCP_TOOLS_LIST_CHANGED = "sdk_mcp_tools_list_changed"

CAPABILITIES_SINCE = (2, 1, 205)
"""The first CLI version that reports ``capabilities``."""

LEGACY_HOOK_EVENTS = frozenset(
    {
        "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
        "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop",
        "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
        "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated",
        "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange", "WorktreeCreate",
        "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged", "MessageDisplay",
    }
)  # fmt: skip
"""The 30 hook events CLI 2.1.197 knows (read from its bundle). A CLI that reports no
capabilities knows at most these; CLI 2.1.330 adds PreModelSwitch, PostModelSwitch and
DirectoryAdded, CLI 2.1.332 PreSkillShellCommand, a later one Interrupt (`HookEvent` lists
all 35)."""

_VERSION = re.compile(r"\s*(\d+)\.(\d+)\.(\d+)")

_UNSUPPORTED_PREFIX = "Unsupported control request subtype"


# ------------------------------------------------------------------ feature detection


class CliFeatures:
    """What the connected CLI is known to support.

    Capabilities come from the ``initialize`` answer (a subset) and from every
    ``system/init`` (the full list, sent once per turn). A CLI whose ``initialize``
    answer has no ``capabilities`` at all predates them (older than 2.1.205): every
    capability-gated feature is then known to be missing. Otherwise a capability not
    seen yet is "unknown" until the first ``system/init``.
    """

    def __init__(self, server_info: Mapping[str, Any] | None) -> None:
        info = server_info or {}
        caps = info.get("capabilities")
        self.legacy = not isinstance(caps, list)
        """True for a CLI that reports no capabilities at all."""
        self.capabilities: set[str] = {c for c in caps if isinstance(c, str)} if caps else set()
        self.complete = False
        """True once a ``system/init`` listed the full capabilities."""
        version = info.get("claude_code_version")
        self.version: str | None = version if isinstance(version, str) else None

    def observe(self, message: Message) -> None:
        """Learn from a ``system/init`` message (a message observer)."""
        if not isinstance(message, SystemMessage) or message.subtype != "init":
            return
        version = message.data.get("claude_code_version")
        if isinstance(version, str):
            self.version = version
        caps = message.data.get("capabilities")
        if isinstance(caps, list):
            self.capabilities |= {c for c in caps if isinstance(c, str)}
            self.complete = True
            self.legacy = False

    def supports(self, capability: str) -> bool | None:
        """True or False when known, None while it cannot be known yet."""
        if capability in self.capabilities:
            return True
        if self.legacy or self.complete:
            return False
        return None

    def require(self, capability: str, what: str) -> None:
        """Raise `UnsupportedFeatureError` if ``capability`` is known to be missing."""
        if self.supports(capability) is False:
            raise UnsupportedFeatureError(
                f"{what} needs a Claude Code CLI with the {capability!r} capability; "
                f"the connected CLI{self._label()} does not report it (upgrade the CLI)"
            )

    def missing_hook_events(self, events: Iterable[str]) -> list[str]:
        """The hook events among ``events`` the CLI is known not to have, in order.

        A CLI that reports no capabilities (older than 2.1.205) knows at most the 30
        events of `LEGACY_HOOK_EVENTS`: the newer ones it would silently drop.
        Events unknown to ccwire itself are left to the CLI.
        """
        if not self.legacy:
            return []
        newer = set(get_args(HookEvent)) - LEGACY_HOOK_EVENTS
        return [e for e in events if e in newer]

    def require_capabilities(self, what: str, why: str, *, subtype: str | None = None) -> None:
        """Raise `UnsupportedFeatureError` for a CLI that reports no capabilities
        at all (older than 2.1.205), where ``what`` is known not to work (``why``)."""
        if self.legacy:
            raise UnsupportedFeatureError(
                f"{what} is not supported by the connected Claude Code CLI"
                f"{self.describe()}: {why}; upgrade the CLI",
                subtype=subtype,
            )

    def describe(self) -> str:
        """The CLI's version for a message: ``" (2.1.197)"``, or what is known of it."""
        if self.version:
            return f" ({self.version})"
        if self.legacy:
            return " (a version before 2.1.205: it reports no capabilities)"
        return ""

    @classmethod
    def from_mcp_client(cls, client_info: object) -> CliFeatures | None:
        """What the ``clientInfo`` of a Claude Code CLI's MCP ``initialize`` tells: its
        version, hence whether it predates capabilities (then every capability is known
        missing; otherwise they stay unknown). None for another client or no version."""
        if not isinstance(client_info, Mapping) or client_info.get("name") != "claude-code":
            return None
        version = client_info.get("version")
        parsed = parse_version(version)
        if parsed is None:
            return None
        features = cls({"capabilities": None if parsed < CAPABILITIES_SINCE else []})
        features.version = str(version)
        return features

    def _label(self) -> str:
        return f" ({self.version})" if self.version else ""


def parse_version(text: object) -> tuple[int, int, int] | None:
    """``"2.1.197"`` (or ``"2.1.197 (Claude Code)"``) as ``(2, 1, 197)``; None if not one."""
    found = _VERSION.match(text) if isinstance(text, str) else None
    if found is None:
        return None
    major, minor, patch = (int(x) for x in found.groups())
    return major, minor, patch


def is_unsupported_answer(exc: ControlProtocolError) -> bool:
    """True when the CLI refused a request because it does not know its subtype."""
    return exc.error_code == "unsupported_request" or _UNSUPPORTED_PREFIX in str(exc)


def unsupported_error(
    subtype: str, features: CliFeatures | None, cause: ControlProtocolError
) -> UnsupportedFeatureError:
    """The typed error for a request the connected CLI does not know."""
    label = f" ({features.version})" if features is not None and features.version else ""
    return UnsupportedFeatureError(
        f"the connected Claude Code CLI{label} does not support the {subtype!r} control "
        f"request (upgrade the CLI); it answered: {cause}",
        subtype=subtype,
        error_code=cause.error_code,
    )
