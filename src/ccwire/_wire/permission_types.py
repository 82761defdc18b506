"""Types of the permission callback (``can_use_tool``): context, results and updates."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

import anyio

from .dialog_types import AnswerLater

__all__ = [
    "CanUseTool",
    "MatchedAskRule",
    "McpServerProvenance",
    "PermissionBehavior",
    "PermissionDecisionClassification",
    "PermissionMode",
    "PermissionResult",
    "PermissionResultAllow",
    "PermissionResultDeny",
    "PermissionRuleValue",
    "PermissionUpdate",
    "PermissionUpdateDestination",
    "ToolPermissionContext",
]

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"]
"""How the CLI decides on tool use; see the protocol reference, section 5.3."""

PermissionBehavior = Literal["allow", "deny", "ask"]
"""What a permission rule does with a matching tool call: allow it, deny it, or ask."""

PermissionDecisionClassification = Literal["user_temporary", "user_permanent", "user_reject"]
"""What a permission decision was, for the CLI's telemetry: allow once
(``user_temporary``), always allow (``user_permanent``) or deny (``user_reject``)."""

PermissionUpdateDestination = Literal[
    "userSettings", "projectSettings", "localSettings", "session", "cliArg"
]
"""Where a `PermissionUpdate` is saved: one of the settings files (user, project,
local), only the current session, or as if given on the CLI's command line."""


@dataclass
class PermissionRuleValue:
    """One permission rule: a tool name and optional rule content (``Bash(npm test:*)``)."""

    tool_name: str
    rule_content: str | None = None


@dataclass
class PermissionUpdate:
    """A change to the permission rules, returned with an allow decision.

    ``type`` selects which other fields matter: ``addRules``/``replaceRules``/``removeRules``
    use ``rules`` and ``behavior``; ``setMode`` uses ``mode``; ``addDirectories`` and
    ``removeDirectories`` use ``directories``. A missing destination is sent as ``session``.
    ``rules`` and ``directories`` may be given as any sequence; they are kept as lists.
    """

    type: Literal[
        "addRules",
        "replaceRules",
        "removeRules",
        "setMode",
        "addDirectories",
        "removeDirectories",
    ]
    rules: list[PermissionRuleValue] | None = None
    behavior: PermissionBehavior | None = None
    mode: PermissionMode | None = None
    directories: list[str] | None = None
    destination: PermissionUpdateDestination | None = None

    def __post_init__(self) -> None:
        if self.rules is not None and not isinstance(self.rules, list):
            object.__setattr__(self, "rules", list(self.rules))
        if self.directories is not None and not isinstance(self.directories, list):
            object.__setattr__(self, "directories", list(self.directories))

    def to_dict(self) -> dict[str, Any]:
        """The update as the control protocol sends it.

        Only the fields ``type`` uses are sent; a rule without ``rule_content`` has no
        ``ruleContent`` key (the CLI rejects a null one); a missing ``destination`` is
        sent as ``"session"``.

        Returns:
            The wire dict.

        Raises:
            ValueError: A field the type needs is ``None`` (``rules`` and ``behavior``
                for the rule types, ``mode`` for ``setMode``, ``directories`` for the
                directory types), or the type is none of the six.
        """
        out: dict[str, Any] = {"type": self.type, "destination": self.destination or "session"}
        if self.type in ("addRules", "replaceRules", "removeRules"):
            rules = self._needed("rules", "a list of PermissionRuleValue")
            out["rules"] = [rule_to_wire(rule) for rule in rules]
            out["behavior"] = self._needed("behavior", "'allow', 'deny' or 'ask'")
        elif self.type == "setMode":
            out["mode"] = self._needed("mode", "a permission mode such as 'acceptEdits'")
        elif self.type in ("addDirectories", "removeDirectories"):
            out["directories"] = list(self._needed("directories", "a list of paths"))
        else:
            raise ValueError(
                f"PermissionUpdate has type {self.type!r}, which this version of ccwire "
                "cannot send: use addRules, replaceRules, removeRules, setMode, "
                "addDirectories or removeDirectories"
            )
        return out

    def _needed(self, name: str, what: str) -> Any:
        value = getattr(self, name)
        if value is None:
            raise ValueError(
                f"PermissionUpdate(type={self.type!r}) has no {name}: set it to {what}"
            )
        return value

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PermissionUpdate:
        """The update from its control-protocol dict (the inverse of `to_dict`).

        Lenient, as for anything the CLI sends: rules that are not objects are skipped.

        Args:
            data: The wire dict, e.g. one of the CLI's permission suggestions.

        Returns:
            The update.
        """
        rules = data.get("rules")
        dirs = data.get("directories")
        return cls(
            type=data.get("type"),  # type: ignore[arg-type]
            rules=[
                PermissionRuleValue(
                    tool_name=str(r.get("toolName", "")),
                    rule_content=c if isinstance(c := r.get("ruleContent"), str) else None,
                )
                for r in rules
                if isinstance(r, Mapping)
            ]
            if isinstance(rules, list)
            else None,
            behavior=data.get("behavior"),
            mode=data.get("mode"),
            directories=[str(x) for x in dirs] if isinstance(dirs, list) else None,
            destination=data.get("destination"),
        )


def rule_to_wire(rule: PermissionRuleValue) -> dict[str, Any]:
    """A rule's wire form: ``ruleContent`` left out when there is none."""
    out: dict[str, Any] = {"toolName": rule.tool_name}
    if rule.rule_content is not None:
        out["ruleContent"] = rule.rule_content
    return out


@dataclass(frozen=True)
class McpServerProvenance:
    """The MCP server a ``mcp__*`` tool belongs to, and where its definition came from.

    Attributes:
        name: The server's configured name (for ``source="sdk"``, the name you gave it;
            otherwise text from configuration: escape it before showing it).
        source: ``"sdk"`` (one of this process's in-process servers), ``"plugin"``, or a
            configuration scope (``user``, ``project``, ``local``, ``dynamic``,
            ``managed``, ...). Base trust on this, not on the name.
    """

    name: str
    source: str


@dataclass(frozen=True)
class MatchedAskRule:
    """The ``permissions.ask`` rule that forced a permission prompt.

    Attributes:
        source: Where the rule is set (``userSettings``, ``projectSettings``, ...).
        tool_name: The tool the rule names.
        rule_content: The rule's content (``npm test:*`` in ``Bash(npm test:*)``), if any.
    """

    source: str
    tool_name: str
    rule_content: str | None = None


@dataclass
class ToolPermissionContext:
    """What the CLI told us about a permission request, besides tool name and input.

    ``signal`` is set when the CLI withdraws the request (for example after an
    interrupt); a callback that waits on something slow can watch it. ``suggestions``
    are the CLI's proposed rule updates, ready to return in
    `PermissionResultAllow.updated_permissions`: a new list per request, as the
    reference SDK gives (the list is the callback's).
    ``raw`` holds the full request.

    ``request_id`` is the control request's id: after returning `ANSWER_LATER`, answer
    with ``ClaudeSDKClient.answer_control_request(request_id, ...)``. ``mcp_server``
    names the MCP server of a ``mcp__*`` tool (`McpServerProvenance`);
    ``matched_ask_rule`` is the ask rule that forced this prompt (`MatchedAskRule`), if
    one did; ``default_to_no`` asks that the prompt open on its decline option, with no
    one-key approval; ``suppress_always_allow_rule`` asks that it offer no "always
    allow" choice.
    """

    tool_use_id: str | None = None
    suggestions: list[PermissionUpdate] = field(default_factory=list)
    # a lambda: touching anyio.Event at import would load anyio's synchronization module
    signal: anyio.Event = field(default_factory=lambda: anyio.Event(), compare=False, repr=False)
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    request_id: str = ""
    mcp_server: McpServerProvenance | None = None
    matched_ask_rule: MatchedAskRule | None = None
    default_to_no: bool | None = None
    suppress_always_allow_rule: bool | None = None


@dataclass
class PermissionResultAllow:
    """Allow the tool call, optionally with rewritten input and rule updates.

    ``decision_classification`` says what the decision was (``user_temporary`` for
    allow once, ``user_permanent`` for always allow), for the CLI's telemetry; unset,
    the CLI assumes allow once.
    """

    updated_input: Mapping[str, Any] | None = None
    updated_permissions: list[PermissionUpdate] | None = None
    behavior: Literal["allow"] = "allow"
    decision_classification: PermissionDecisionClassification | None = None


@dataclass
class PermissionResultDeny:
    """Deny the tool call; the model sees ``message``. ``interrupt=True`` also ends the turn.

    ``decision_classification`` (``user_reject``) says what the decision was, for the
    CLI's telemetry.
    """

    message: str = ""
    interrupt: bool = False
    behavior: Literal["deny"] = "deny"
    decision_classification: PermissionDecisionClassification | None = None


PermissionResult = Union[PermissionResultAllow, PermissionResultDeny]
"""What a ``can_use_tool`` callback returns: `PermissionResultAllow` or
`PermissionResultDeny`."""

CanUseTool = Callable[
    [str, dict[str, Any], ToolPermissionContext], Awaitable[Union[PermissionResult, AnswerLater]]
]
"""``async def can_use_tool(tool_name, tool_input, context) -> PermissionResult``.

It may also return `ANSWER_LATER`: the request then stays open until
``ClaudeSDKClient.answer_control_request(context.request_id, result)`` answers it."""
