"""A fake Claude Code CLI for the batch tests (stdlib only), run as a real subprocess.

It answers ``initialize``, then plays each prompt by its first word:

* ``crash ...``: a first assistant message, then 40 lines of stderr (secrets among
  them) and exit code 3: a CLI that dies mid-session;
* ``hold ...``: wait for the test's go-ahead (see below), then answer;
* ``act ...``: a tool call (the session may have acted), then wait like ``hold``;
* ``act-late ...``: the same, but the tool call's message comes only after the wait
  (as when the SDK is slow to read it: the tool ran before the SDK saw the call);
* ``pay <usd> ...``: ``echo: <prompt>``, costing ``<usd>``;
* anything else: ``echo: <prompt>`` (costing $0.001).

Before the tool "runs" (the wait), the fake asks the ``PreToolUse`` hooks the SDK
registered at ``initialize``, all at once as the CLI may, and waits for every answer;
when one denies the call (or stops the session), the tool does not run: the turn
ends with ``denied: <reason>``.

Waiting: the fake connects to ``FAKE_HOLD`` (``host:port``, a server in the test
process), writes one JSON line (its prompt, pid and parent pid) and waits for a line
back; it exits when its stdin ends first (the SDK closed the session). Each process
is one session, with a session id of its own.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import uuid
from typing import Any

SID = str(uuid.uuid4())
HOOKS: dict[str, Any] = {}  # the ``hooks`` of ``initialize``
_out = sys.stdout.buffer
_inp = sys.stdin.buffer


def send(obj: dict[str, Any]) -> None:
    _out.write(json.dumps(obj).encode() + b"\n")
    _out.flush()


def read() -> dict[str, Any] | None:
    while True:
        line = _inp.readline()
        if not line:
            return None
        if line.strip():
            frame: dict[str, Any] = json.loads(line)
            return frame


def assistant(content: list[dict[str, Any]]) -> None:
    message = {"id": f"msg_{uuid.uuid4().hex[:8]}", "type": "message", "role": "assistant",
               "model": "fake-model", "content": content}  # fmt: skip
    send({"type": "assistant", "message": message, "parent_tool_use_id": None,
          "session_id": SID})  # fmt: skip


def result(text: str, cost: float = 0.001) -> None:
    send({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 1,
          "duration_api_ms": 1, "num_turns": 1, "result": text, "session_id": SID,
          "total_cost_usd": cost, "usage": {"input_tokens": 3, "output_tokens": 2}})  # fmt: skip


def prompt_of(frame: dict[str, Any]) -> str:
    content = frame.get("message", {}).get("content", "")
    if isinstance(content, list):
        content = " ".join(b.get("text", "") for b in content if isinstance(b, dict))
    return str(content)


def hold(prompt: str) -> None:
    """Wait for the test's go-ahead; exit if the SDK ends the session first."""
    host, _, port = os.environ["FAKE_HOLD"].rpartition(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        hello = {"prompt": prompt, "pid": os.getpid(), "ppid": os.getppid(), "sid": SID}
        sock.sendall(json.dumps(hello).encode() + b"\n")
        while True:
            ready, _, _ = select.select([sock, _inp], [], [], 120)
            if not ready:
                sys.exit(5)  # nobody released us: end instead of lingering
            if _inp in ready and read() is None:
                sys.exit(0)  # other frames (none is expected) are dropped
            if sock in ready:
                if not sock.recv(64):
                    sys.exit(6)  # the test went away
                return


def pre_tool_use(call: dict[str, Any]) -> str | None:
    """Ask every ``PreToolUse`` hook callback about `call`; the reason of a deny, if any."""
    asked: set[str] = set()
    for entry in HOOKS.get("PreToolUse") or []:
        if entry.get("matcher") not in (None, "", "*", call["name"]):
            continue
        for cid in entry.get("hookCallbackIds") or []:
            rid = f"hook_req_{uuid.uuid4().hex[:8]}"
            asked.add(rid)
            data = {"session_id": SID, "hook_event_name": "PreToolUse", "cwd": os.getcwd(),
                    "transcript_path": "", "tool_name": call["name"],
                    "tool_input": call["input"], "tool_use_id": call["id"]}  # fmt: skip
            send({"type": "control_request", "request_id": rid, "request": {
                "subtype": "hook_callback", "callback_id": cid, "input": data,
                "tool_use_id": call["id"]}})  # fmt: skip
    denied = None
    while asked:
        frame = read()
        if frame is None:
            sys.exit(0)  # the SDK ended the session
        answer = frame.get("response", {}) if frame.get("type") == "control_response" else {}
        if answer.get("request_id") not in asked:
            continue
        asked.discard(answer["request_id"])
        out = answer.get("response") or {}
        specific = out.get("hookSpecificOutput") or {}
        if specific.get("permissionDecision") == "deny" or out.get("continue") is False:
            denied = denied or specific.get("permissionDecisionReason") or "stopped"
    return denied


def crash() -> None:
    assistant([{"type": "text", "text": "half an answer"}])
    for n in range(40):
        sys.stderr.write(f"fake cli: trace line {n}\n")
    sys.stderr.write(
        "fatal: ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 rejected\n"
    )
    sys.stderr.write("fatal: the end of the story\n")
    sys.stderr.flush()
    sys.exit(3)


def main() -> None:
    while True:
        frame = read()
        if frame is None:
            return
        if frame.get("type") == "control_request":
            rid = frame["request_id"]
            body: dict[str, Any] = {}
            if frame["request"].get("subtype") == "initialize":
                body = {"commands": [], "capabilities": [], "pid": os.getpid()}
                HOOKS.update(frame["request"].get("hooks") or {})
            answer = {"subtype": "success", "request_id": rid, "response": body}
            send({"type": "control_response", "response": answer})
            continue
        if frame.get("type") != "user":
            continue
        prompt = prompt_of(frame)
        send({"type": "system", "subtype": "init", "session_id": SID, "tools": []})
        word = prompt.split(" ", 1)[0]
        if word == "crash":
            crash()
        if word in ("act", "act-late"):
            call = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:8]}", "name": "Bash",
                    "input": {"command": "touch /tmp/side-effect"}}  # fmt: skip
            if word == "act":
                assistant([call])
            denied = pre_tool_use(call)
            if denied is not None:
                assistant([{"type": "text", "text": f"denied: {denied}"}])
                result(f"denied: {denied}")
                continue
            hold(prompt)  # the tool runs
            if word == "act-late":
                assistant([call])
        elif word == "hold":
            hold(prompt)
        assistant([{"type": "text", "text": f"echo: {prompt}"}])
        cost = float(prompt.split(" ")[1]) if word == "pay" else 0.001
        result(f"echo: {prompt}", cost)


if __name__ == "__main__":
    main()
