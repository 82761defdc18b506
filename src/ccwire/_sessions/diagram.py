"""The session state machine as a Mermaid diagram, drawn from the one transition table.

`python -m ccwire._sessions.diagram` prints it; `docs/concepts/architecture.md` holds
the same text, and a test fails when the two differ, so the picture cannot drift from
`TRANSITIONS`.
"""

from __future__ import annotations

from .state import TRANSITIONS, SessionState

__all__ = ["state_diagram"]


def state_diagram() -> str:
    """The Mermaid `stateDiagram-v2` of `TRANSITIONS`, one line per allowed move.

    States appear in their declaration order; `idle` is the start, and the states with
    no way out (`failed`, `cancelled`) lead to the end.

    Returns:
        The diagram's text, ending with a newline.
    """
    order = list(SessionState)
    lines = ["stateDiagram-v2", f"    [*] --> {SessionState.IDLE.value}"]
    for source in order:
        for target in sorted(TRANSITIONS[source], key=order.index):
            lines.append(f"    {source.value} --> {target.value}")
    lines += [f"    {s.value} --> [*]" for s in order if not TRANSITIONS[s]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(state_diagram(), end="")
