"""A fault-injecting fake Claude Code CLI (stdlib only), run as a real subprocess.

The scenario comes from ``FAULT_SCENARIO`` (``FAULT_ARG`` is its optional parameter);
``tests/faults/conftest.py`` starts it through ``ClaudeAgentOptions(cli_path=...)``. It
plays the CLI's side of the stream-json protocol until the scenario's fault, then
misbehaves: exits or is SIGKILLed at a chosen point, never answers, writes garbage,
partial lines, a huge line, a flood of stderr, closes its stdin, ...
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

SID = "00000000-0000-4000-8000-00000000fa17"
_out = sys.stdout.buffer
_inp = sys.stdin.buffer


def write(data: bytes) -> None:
    _out.write(data)
    _out.flush()


def send(obj: dict[str, Any]) -> None:
    write(json.dumps(obj).encode() + b"\n")


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def read() -> dict[str, Any] | None:
    while True:
        line = _inp.readline()
        if not line:
            return None
        if line.strip():
            frame: dict[str, Any] = json.loads(line)
            return frame


def read_until(pred: Any) -> dict[str, Any]:
    while True:
        frame = read()
        if frame is None:
            err("fault_cli: stdin closed while waiting")
            sys.exit(0)
        if pred(frame):
            return frame


def is_request(frame: dict[str, Any], subtype: str) -> bool:
    return frame.get("type") == "control_request" and frame["request"].get("subtype") == subtype


def answer(rid: str, body: dict[str, Any]) -> None:
    send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": rid, "response": body},
        }
    )


def die(how: str, code: int = 2) -> None:
    if how == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(code)


def request(rid: str, subtype: str, **fields: object) -> None:
    send({"type": "control_request", "request_id": rid, "request": {"subtype": subtype, **fields}})


def tools_call(
    rid: str, name: str, jsonrpc_id: int, arguments: dict[str, Any] | None = None
) -> None:
    message = {
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}},
        "jsonrpc": "2.0",
        "id": jsonrpc_id,
    }
    request(rid, "mcp_message", server_name="s", message=message)


def response_to(rid: str) -> dict[str, Any]:
    frame = read_until(
        lambda f: f.get("type") == "control_response" and f["response"].get("request_id") == rid
    )
    response: dict[str, Any] = frame["response"]
    return response


def assistant(text: str) -> None:
    send(
        {
            "type": "assistant",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "fault-model",
                "content": [{"type": "text", "text": text}],
            },
            "parent_tool_use_id": None,
            "session_id": SID,
        }
    )


def result(text: str = "done", **extra: object) -> None:
    send(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "duration_ms": 1,
            "duration_api_ms": 1,
            "num_turns": 1,
            "result": text,
            "session_id": SID,
            **extra,
        }
    )
    state("idle")


def state(name: str) -> None:
    frame: dict[str, Any] = {
        "type": "system",
        "subtype": "session_state_changed",
        "state": name,
        "session_id": SID,
    }
    if os.environ.get("CLAUDE_CODE_SDK_READS_SESSION_STATE"):  # as the real CLI marks them
        frame["sdk_host_only"] = True
    send(frame)


def system_init() -> None:
    send({"type": "system", "subtype": "init", "session_id": SID, "tools": []})


def flood_stderr(total: int) -> None:
    line = ("e" * 1023 + "\n").encode()
    for _ in range(total // len(line)):
        sys.stderr.buffer.write(line)
    sys.stderr.buffer.flush()


# --------------------------------------------------------------------- scenarios


def callbacks() -> None:
    """Requests whose callbacks misbehave; the answers go back in the result."""
    got: dict[str, object] = {}
    for rid, name in (("t1", "raises"), ("t2", "hangs"), ("t3", "wrong_type")):
        tools_call(rid, name, len(got) + 10)
        got[name] = response_to(rid)
    for rid, tool in (("p1", "raise"), ("p2", "wrong")):
        request(rid, "can_use_tool", tool_name=tool, input={}, tool_use_id=rid)
        got[f"perm_{tool}"] = response_to(rid)
    request("p3", "can_use_tool", tool_name="hang", input={}, tool_use_id="p3")
    time.sleep(0.2)
    send({"type": "control_cancel_request", "request_id": "p3"})
    for rid, cid in (("h1", "hook_0"), ("h2", "hook_1"), ("h3", "hook_2")):
        request(rid, "hook_callback", callback_id=cid, input={"hook_event_name": "Stop"})
        got[cid] = response_to(rid)
    request("p4", "can_use_tool", tool_name="ok", input={"x": 1}, tool_use_id="p4")
    got["perm_ok"] = response_to("p4")
    result("callbacks done", structured_output=got)


def unencodable() -> None:
    """Requests whose callbacks answer with values JSON cannot carry; every answer goes
    back in the result."""
    got: dict[str, object] = {}
    for n, name in enumerate(("surrogate", "a_set", "nan", "filename")):
        tools_call(f"t{n}", name, n + 10)
        got[name] = response_to(f"t{n}")
    request("p1", "can_use_tool", tool_name="Write", input={"x": 1}, tool_use_id="p1")
    got["perm"] = response_to("p1")
    request("h1", "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"})
    got["hook"] = response_to("h1")
    tools_call("t9", "fine", 99)
    got["fine"] = response_to("t9")
    result("unencodable done", structured_output=got)


def burst(tools: list[str], count: int) -> None:
    """``count`` tool calls written at once (one write), cycling through ``tools``, each
    with a 300-character argument; then every answer is read. The result tells which
    calls were answered, and how often each."""
    lines = []
    for n in range(count):
        message = {
            "method": "tools/call",
            "params": {"name": tools[n % len(tools)], "arguments": {"text": f"{n:03d}" * 100}},
            "jsonrpc": "2.0",
            "id": n,
        }
        body = {"subtype": "mcp_message", "server_name": "s", "message": message}
        call: dict[str, Any] = {"type": "control_request", "request_id": f"b{n}", "request": body}
        lines.append(json.dumps(call).encode() + b"\n")
    write(b"".join(lines))
    answers: dict[str, int] = {}
    texts: dict[str, str] = {}
    while len(answers) < count:
        frame = read_until(lambda f: f.get("type") == "control_response")
        rid = frame["response"]["request_id"]
        answers[rid] = answers.get(rid, 0) + 1
        reply = frame["response"].get("response", {}).get("mcp_response", {})
        texts[rid] = reply.get("result", {}).get("content", [{}])[0].get("text", "")
    request("last", "can_use_tool", tool_name="Write", input={}, tool_use_id="last")
    while True:  # a round trip: an answer sent twice would arrive before this one's
        frame = read_until(lambda f: f.get("type") == "control_response")
        rid = frame["response"]["request_id"]
        if rid == "last":
            break
        answers[rid] = answers.get(rid, 0) + 1
    result("burst done", structured_output={"answers": answers, "texts": texts})


def each_callback(tools: list[str]) -> None:
    """One call of each tool in ``tools``, one permission request, one hook callback,
    then one more call of the first tool; every answer goes back in the result."""
    got: dict[str, object] = {}
    for n, name in enumerate(tools):
        tools_call(f"t{n}", name, n + 10)
        got[name] = response_to(f"t{n}")
    request("p1", "can_use_tool", tool_name="Write", input={"x": 1}, tool_use_id="p1")
    got["perm"] = response_to("p1")
    request("h1", "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"})
    got["hook"] = response_to("h1")
    tools_call("again", tools[-1], 99)
    got["again"] = response_to("again")
    result("each callback done", structured_output=got)


def garbage() -> None:
    system_init()
    write(b"not json at all\n")
    write(b"\x00\xff\xfe binary junk\n")
    write(b'{"type": "assistant", "mess\n')  # a torn line
    write(b"[1, 2, 3]\n")
    send({"type": "brand_new_type", "payload": {"x": 1}})
    send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": "nobody-asked", "response": {}},
        }
    )
    send({"type": "control_request", "request_id": "weird", "request": {"subtype": "no_such"}})
    assistant("after the garbage")
    result()


def partial_lines() -> None:
    frames = [
        {"type": "system", "subtype": "init", "session_id": SID, "tools": []},
        {
            "type": "assistant",
            "message": {"model": "m", "content": [{"type": "text", "text": "héllo wörld ✓"}]},
            "session_id": SID,
        },
    ]
    data = b"".join(json.dumps(f, ensure_ascii=False).encode() + b"\n" for f in frames)
    final = json.dumps(
        {"type": "result", "subtype": "success", "is_error": False, "result": "done"}
    ).encode()
    data += final  # the last line has no newline: it ends with the stream
    for i in range(0, len(data), 3):
        write(data[i : i + 3])
        time.sleep(0.0005)
    _out.close()
    os.close(1)
    while read() is not None:
        pass


def huge_line(size: int) -> None:
    head = json.dumps(
        {
            "type": "assistant",
            "message": {"model": "m", "content": [{"type": "text", "text": "@@"}]},
            "session_id": SID,
        }
    ).encode()
    before, after = head.split(b"@@")
    write(before)
    block = b"x" * (1 << 20)
    left = size
    while left > 0:
        n = min(left, len(block))
        _out.write(block[:n])
        left -= n
    write(after + b"\n")
    result()


def slow_reader(count: int) -> None:
    text = "y" * 20_000
    for i in range(count):
        assistant(f"{i}:{text}")
        tools_call(f"c{i}", "count", i + 10, {"i": i})
        response_to(f"c{i}")
    result()


def flood(count: int) -> None:
    """``count`` assistant messages of 1 MiB each, as fast as the pipe takes them; the
    number written so far goes to the file named by ``FAULT_PROGRESS``."""
    progress = os.environ.get("FAULT_PROGRESS")
    text = "z" * (1 << 20)
    for i in range(count):
        assistant(f"{i}:{text}")
        if progress:
            with open(progress, "w") as f:
                f.write(str(i + 1))
    result()


def lines_at_once(path: str) -> None:
    """The lines of the file ``path``, in one write, then a result."""
    with open(path, "rb") as f:
        write(f.read())
    result()


def stdin_closes() -> None:
    system_init()
    os.close(0)
    send({"type": "system", "subtype": "stdin_closed", "session_id": SID})
    time.sleep(1.0)
    sys.exit(0)


def linger(how: str) -> None:
    """After its input ends, write one more line, then linger instead of exiting:
    ``ignore_term`` also ignores SIGTERM, ``child`` leaves a child holding stdout,
    ``closed_stdout`` closes stdout first (and stays alive), ``stderr`` floods stderr."""
    while read() is not None:
        pass
    assistant("after the end of input")
    if how == "ignore_term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    elif how == "child":
        import subprocess

        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    elif how == "closed_stdout":
        _out.close()
        os.close(1)
    elif how == "stderr":
        while True:
            flood_stderr(1 << 20)
    time.sleep(60)
    sys.exit(0)


def main() -> None:
    sc = os.environ.get("FAULT_SCENARIO", "")
    arg = os.environ.get("FAULT_ARG", "")
    if sc.startswith("stderr_flood"):
        flood_stderr(int(arg or 50_000_000))
        err("LAST STDERR LINE")
        if sc == "stderr_flood_exit":
            sys.exit(3)
    init = read_until(lambda f: is_request(f, "initialize"))
    if sc in ("exit_during_initialize", "kill_during_initialize"):
        err("fatal: cannot initialize")
        die(sc.split("_")[0], 1)
    if sc == "never_initialize":
        while read() is not None:
            pass
        sys.exit(0)
    if sc == "hangs_at_initialize":  # hung: not even the end of its input stops it
        time.sleep(600)
    answer(init["request_id"], {"commands": [], "capabilities": [], "pid": os.getpid()})
    read_until(lambda f: f.get("type") == "user")
    state("running")
    how = sc.split("_")[0]
    if sc in ("exit_mid_turn", "kill_mid_turn"):
        system_init()
        assistant("half an answer")
        err("fatal: mid-turn")
        die(how)
    elif sc in ("exit_mid_tool", "kill_mid_tool"):
        tools_call("tool-1", "block", 5)
        read_until(lambda f: f.get("type") == "marker")  # the tool has started
        err("fatal: mid-tool-call")
        die(how)
    elif sc in ("exit_mid_permission", "kill_mid_permission"):
        request("perm-1", "can_use_tool", tool_name="Bash", input={"command": "ls"})
        read_until(lambda f: f.get("type") == "marker")  # the callback has started
        err("fatal: mid-permission")
        die(how)
    elif sc == "exit_on_interrupt":
        read_until(lambda f: is_request(f, "interrupt"))
        err("fatal: interrupted badly")
        die("exit", 4)
    elif sc == "callbacks":
        callbacks()
    elif sc == "each_callback":
        each_callback(arg.split(","))
    elif sc == "unencodable":
        unencodable()
    elif sc == "burst":
        tools, count = arg.split(":")
        burst(tools.split(","), int(count))
    elif sc == "garbage":
        garbage()
    elif sc == "partial_lines":
        partial_lines()
        return
    elif sc == "huge_line":
        huge_line(int(arg))
    elif sc == "flood":
        flood(int(arg))
    elif sc == "slow_reader":
        slow_reader(int(arg or 50))
    elif sc == "stdin_closes":
        stdin_closes()
    elif sc == "lines_at_once":
        lines_at_once(arg)
    else:  # plain, stderr_flood_ok, linger
        assistant("hello")
        result()
    if sc == "linger":
        linger(arg)
    while read() is not None:  # until the SDK closes stdin
        pass


if __name__ == "__main__":
    main()
