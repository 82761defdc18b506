"""`ReferenceOrigin`: the reference's package in the MRO of ccwire's agent objects.

Frameworks that serve the agents of several SDKs tell which SDK an object comes from
by the modules of the classes in its MRO: bridge-adk 0.1.0's adapter for
``claude-agent-sdk`` takes an object as one of its agents when a class of
``type(obj).__mro__`` lives in ``claude_agent_sdk``. ccwire's classes report their
public module, ``ccwire`` (where pickle finds them), so an options object or a client
reached through the drop-in was refused there. `ReferenceOrigin`, an empty base of
`ClaudeAgentOptions` and `ClaudeSDKClient`, reports ``claude_agent_sdk``: it adds no
attribute, no slot and no behaviour.
"""

from __future__ import annotations

__all__ = ["ReferenceOrigin"]


class ReferenceOrigin:
    """An empty base whose module is the reference's package, ``claude_agent_sdk``."""

    __slots__ = ()


ReferenceOrigin.__module__ = "claude_agent_sdk"
