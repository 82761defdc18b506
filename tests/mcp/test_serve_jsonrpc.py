"""``ccwire serve`` answers every JSON-RPC edge case as the spec says, over real stdio.

One ``ccwire serve`` subprocess gets every line of the table; each line that needs an
answer must get exactly the answer in the table (matched by id or, for id ``null``,
by order), and nothing is left unanswered: a final ``ping`` must come back last.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_types.version import KNOWN_PROTOCOL_VERSIONS

ROOT = Path(__file__).resolve().parents[2]
TARGET = "tests.fixtures.mcp_serve_server:server"
ENTRY = "import sys; from ccwire._app.main import main; raise SystemExit(main(sys.argv[1:]))"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "edge", "version": "1"}}  # fmt: skip

BAD_INITS: list[dict[str, Any]] = [
    {**INIT, "protocolVersion": 42},
    {**INIT, "protocolVersion": None},
    {"protocolVersion": "2025-11-25", "clientInfo": INIT["clientInfo"]},
    {**INIT, "capabilities": 5},
    {"protocolVersion": "2025-11-25", "capabilities": {}},
    {**INIT, "clientInfo": {"name": "edge"}},
]
"""``initialize`` params the official SDK refuses with -32602."""
BAD_META = ['{"_meta":"x"}', '{"_meta":[]}'] + [
    f'{{"_meta":{{"progressToken":{token}}}}}' for token in ("{}", "[]", "null", "true")
]
"""Params whose ``_meta`` (or its progress token) breaks the MCP schema: -32602."""

# (what is sent, the expected error code or "ok"/None for no answer, the expected id)
NOT_INITIALIZED: list[tuple[str, Any, Any]] = [
    ('{"jsonrpc":"2.0","id":"early","method":"tools/list"}', -32600, "early"),
    ('{"jsonrpc":"2.0","id":"early-unknown","method":"no/such"}', -32601, "early-unknown"),
    ('{"jsonrpc":"2.0","id":"early-ping","method":"ping"}', "ok", "early-ping"),
    ('{"jsonrpc":"2.0","method":"notifications/initialized"}', None, None),
]
CASES: list[tuple[str, Any, Any]] = [
    ("{not json", -32700, None),
    ('{"jsonrpc":"2.0","id":1,"method":"ping"', -32700, None),
    ("[]", -32600, None),
    ("42", -32600, None),
    ('"s"', -32600, None),
    ("null", -32600, None),
    ("true", -32600, None),
    ('{"foo":1}', -32600, None),
    (
        '[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"ping"}]',
        -32600,
        None,
    ),
    ('{"jsonrpc":"1.0","id":"v1","method":"ping"}', -32600, "v1"),
    ('{"id":"nov","method":"ping"}', -32600, "nov"),
    ('{"jsonrpc":2.0,"id":"numv","method":"ping"}', -32600, "numv"),
    ('{"jsonrpc":"2.0","id":"nm","method":42}', -32600, "nm"),
    ('{"jsonrpc":"2.0","id":"nullm","method":null}', -32600, "nullm"),
    ('{"jsonrpc":"2.0","id":"ap","method":"tools/list","params":[1,2]}', -32600, "ap"),
    ('{"jsonrpc":"2.0","id":"sp","method":"tools/list","params":"x"}', -32600, "sp"),
    ('{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":true,"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":"um","method":"no/such/method"}', -32601, "um"),
    ('{"jsonrpc":"2.0","method":"no/such/notification"}', None, None),
    ('{"jsonrpc":"2.0","id":"tc","method":"tools/call","params":{"name":"nope"}}', -32602, "tc"),
    (
        '{"jsonrpc":"2.0","id":"ll","method":"logging/setLevel","params":{"level":"loud"}}',
        -32602,
        "ll",
    ),
    (
        '{"jsonrpc":"2.0","id":"cur","method":"tools/list","params":{"cursor":"bogus"}}',
        -32602,
        "cur",
    ),
    ('{"jsonrpc":"2.0","id":"gp","method":"prompts/get","params":{}}', -32602, "gp"),
    (
        '{"jsonrpc":"2.0","id":"rr","method":"resources/read","params":{"uri":"x://none"}}',
        -32002,
        "rr",
    ),
    (
        '{"jsonrpc":"2.0","id":"ver","method":"tools/list",'
        '"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}',
        -32022,
        "ver",
    ),
    ('{"jsonrpc":"2.0","id":7,"result":{}}', None, None),  # a response to nothing we sent
    ('{"jsonrpc":"2.0","id":"r1","result":{},"error":{"code":1,"message":"m"}}', -32600, "r1"),
    ('{"jsonrpc":"2.0","id":"ok","method":"tools/list","params":{}}', "ok", "ok"),
    ('{"jsonrpc":"2.0","id":"pnull","method":"tools/list","params":null}', "ok", "pnull"),
    ('{"jsonrpc":"2.0","method":"notifications/initialized","params":null}', None, None),
    *[
        (f'{{"jsonrpc":"2.0","id":"pt{i}","method":"ping","params":{meta}}}', -32602, f"pt{i}")
        for i, meta in enumerate(BAD_META)
    ],
    *[
        (
            json.dumps({"jsonrpc": "2.0", "id": f"bi{i}", "method": "initialize", "params": p}),
            -32602,
            f"bi{i}",
        )
        for i, p in enumerate(BAD_INITS)
    ],
    (
        '{"jsonrpc":"2.0","id":"ta","method":"tools/call","params":{"name":"add","arguments":[1]}}',
        -32602,
        "ta",
    ),
    ('{"jsonrpc":"2.0","id":3.5,"method":"ping"}', "ok", 3.5),
    ("   ", None, None),  # a blank line is no message
]


def _converse(lines: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "serve", TARGET],
        cwd=ROOT,
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_every_edge_case_is_answered_as_the_spec_says() -> None:
    init = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": INIT})
    last = '{"jsonrpc":"2.0","id":"last","method":"ping"}'
    table = [*NOT_INITIALIZED, (init, "ok", "init"), *CASES]
    answers = _converse([line for line, _, _ in table] + [last])
    assert answers[-1] == {"jsonrpc": "2.0", "id": "last", "result": {}}  # nothing hangs
    answers = answers[:-1]
    expected = [(code, rid) for _, code, rid in table if code is not None]
    assert len(answers) == len(expected), answers
    by_id = {json.dumps(a["id"]): a for a in answers if a["id"] is not None}
    anonymous = [a for a in answers if a["id"] is None]
    for line, code, rid in [t for t in table if t[1] is not None]:
        answer = by_id.pop(json.dumps(rid)) if rid is not None else anonymous.pop(0)
        assert answer["jsonrpc"] == "2.0"
        if code == "ok":
            assert "result" in answer, (line, answer)
        else:
            assert answer.get("error", {}).get("code") == code, (line, answer)
            assert answer["error"]["message"]
    assert by_id == {} and anonymous == []


@pytest.mark.parametrize("version", [*KNOWN_PROTOCOL_VERSIONS, "2099-01-01", "1999-01-01"])
def test_initialize_answers_the_clients_version_or_the_newest(version: str) -> None:
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    params = {**INIT, "protocolVersion": version}
    (answer,) = _converse(
        [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})]
    )
    expected = version if version in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
    assert answer["result"]["protocolVersion"] == expected
