"""Secrets are masked by key name and by value shape: audit log, reprs, errors, logs, argv."""

from __future__ import annotations

import io
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from ccwire import (
    AuditLog,
    ClaudeAgentOptions,
    CLIConnectionError,
    create_sdk_mcp_server,
    redact_secrets,
    tool,
)
from ccwire._conversation.argv import build_argv
from ccwire._core.redact import _shapes as redact_shapes, is_secret_key, redact_text, redact_value
from tests.conversation.test_audit import call, records
from tests.fixtures.fake_session import connected

# what the issue found passing through, and more of the same kind
SECRET_NAMES = [
    "x-api-key", "ANTHROPIC_API_KEY", "db_password", "pwd", "clientSecret", "accessToken",
    "aws_secret_access_key", "id_token", "github_token", "bearer", "set-cookie",
    "authorization", "password", "Proxy-Authorization", "refresh_token", "apiKey",
    "PRIVATE_KEY", "client-secret", "SESSION_TOKEN", "X-Auth-Token", "passphrase",
    "credentials", "cookie", "jwt", "OPENAI_API_KEY", "signingKey",
]  # fmt: skip
HARMLESS_NAMES = [
    "max_tokens", "input_tokens", "cache_creation_input_tokens", "author", "session_id",
    "key", "keyboard", "tokens", "user", "path", "monkey", "pwdless_mode_flag",
]  # fmt: skip

ANT = "sk-ant-api03-AbCdEfGhIjKlMnOp_1234567890-xyz"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AKIA = "AKIAIOSFODNN7EXAMPLE"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
SHAPED = [ANT, GHP, AKIA, JWT, "xoxb-1234567890-abcdefghij", "github_pat_" + "x1" * 20]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_key_names(name: str) -> None:
    assert is_secret_key(name)
    assert redact_value({name: "s3cr3t-value", "nested": [{name: 42}]}) == {
        name: "***",
        "nested": [{name: "***"}],
    }


@pytest.mark.parametrize("name", HARMLESS_NAMES)
def test_harmless_key_names(name: str) -> None:
    assert not is_secret_key(name)
    assert redact_value({name: "plain"}) == {name: "plain"}


@pytest.mark.parametrize("secret", SHAPED)
def test_secret_shapes_in_free_text(secret: str) -> None:
    text = f"the call failed with {secret}, retry later"
    masked = redact_text(text)
    assert secret not in masked
    assert masked == "the call failed with ***, retry later"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:hunter2@example.com/x", "https://user:***@example.com/x"),
        ("postgres://app:pa55@db:5432/app", "postgres://app:***@db:5432/app"),
        ("GET /v1?token=abc123&page=2", "GET /v1?token=***&page=2"),
        ("https://h/x?key=AbC&sig=zz#top", "https://h/x?key=***&sig=***#top"),
        ("Authorization: Bearer abcdefghijkl", "Authorization: ***"),
        ("curl -H 'x-api-key: 12345'", "curl -H 'x-api-key: ***'"),
        ('{"db_password": "p@ss w", "max_tokens": 9}', '{"db_password": "***", "max_tokens": 9}'),
        ("GITHUB_TOKEN=abc DEBUG=1", "GITHUB_TOKEN=*** DEBUG=1"),
        ("SECRET_KEY=django-insecure-x token_value: 7", "SECRET_KEY=*** token_value: ***"),
        ("token_count=5, max_tokens=9", "token_count=5, max_tokens=9"),
        ("set-cookie: sid=abc; Path=/", "set-cookie: ***; Path=/"),
        ("used 9 input_tokens, max_tokens=4096", "used 9 input_tokens, max_tokens=4096"),
        ("the author: Ann", "the author: Ann"),
        ("--cwd /etc/passwd: not a directory", "--cwd /etc/passwd: not a directory"),
        ("C:\\keys\\token: missing; token: abc", "C:\\keys\\token: missing; token: ***"),
    ],
)
def test_secret_pairs_and_urls_in_free_text(text: str, expected: str) -> None:
    assert redact_text(text) == expected


def test_the_default_audit_redactor_masks_names_and_shapes() -> None:
    arguments: dict[str, Any] = {name: f"value-{i}" for i, name in enumerate(SECRET_NAMES)}
    arguments |= {"note": f"call me with {ANT}", "url": "https://u:pw@h/x?token=t", "n": 3}
    arguments |= {"max_tokens": 100}
    masked = redact_secrets()("tool", arguments)
    assert all(masked[name] == "***" for name in SECRET_NAMES)
    assert masked["note"] == "call me with ***"
    assert masked["url"] == "https://u:***@h/x?token=***"
    assert masked["n"] == 3 and masked["max_tokens"] == 100
    extra = redact_secrets(["account"])("tool", {"account": "4242", "user": "ann"})
    assert extra == {"account": "***", "user": "ann"}


@tool("deploy", "Deploy", {"target": str})
async def deploy(args: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError(f"could not log in with {ANT} to {args['target']}")


@pytest.mark.anyio
async def test_the_audit_log_masks_arguments_and_details(anyio_backend: str) -> None:
    buf = io.StringIO()
    server = create_sdk_mcp_server("s", tools=[deploy])
    options = ClaudeAgentOptions(mcp_servers={"s": server}, audit_log=AuditLog(buf))
    async with connected(options) as (_, fake):
        target = "https://deploy:hunter2@example.com/?token=abc"
        await call(fake, "deploy", {"target": target}, "toolu_1")
    (record,) = records(buf)
    assert record["outcome"] == "error"
    assert record["arguments"] == {"target": "https://deploy:***@example.com/?token=***"}
    assert "could not log in with ***" in record["detail"]
    for secret in (ANT, "hunter2", "token=abc"):
        assert secret not in buf.getvalue()


def test_options_repr_masks_every_secret() -> None:
    options = ClaudeAgentOptions(
        env={"ANTHROPIC_API_KEY": ANT},
        extra_args={
            "api-key": "plainword",
            "header": f"Authorization: Bearer {GHP}",
            "debug-to": "/tmp/x",
            "verbose": None,
            "max-retries": "3",
        },
        mcp_servers={
            "remote": {
                "type": "http",
                "url": "https://me:pa55word@mcp.example/x?token=abc&key=k",
                "headers": {"X-Api-Key": "hdr-secret"},
            },
            "local": {"type": "stdio", "command": "srv", "env": {"DB_PASSWORD": "dbpw"}},
        },
        settings='{"env": {"AWS_SECRET_ACCESS_KEY": "awssecret"}}',
        system_prompt=f"You may use {JWT}.",
    )
    shown = repr(options)
    for secret in (ANT, "plainword", GHP, "/tmp/x", "pa55word", "token=abc", "key=k",
                   "hdr-secret", "dbpw", "awssecret", JWT):  # fmt: skip
        assert secret not in shown, secret
    assert "'verbose': None" in shown and "'max-retries': '3'" in shown
    assert "https://me:***@mcp.example/x" in shown


def test_error_text_and_logs_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    error = CLIConnectionError(f"the CLI refused ANTHROPIC_API_KEY={ANT} for https://a:b@h/")
    assert ANT not in str(error) and ANT not in repr(error) and "https://a:***@h/" in str(error)
    caplog.set_level(logging.DEBUG, logger="ccwire")
    log = logging.getLogger("ccwire")
    log.warning("token %s rejected by %s", GHP, "https://u:pw@h")
    try:
        int(f"bad key {AKIA}")
    except ValueError:
        log.exception("while calling with %s", JWT)
    text = caplog.text + "".join(r.exc_text or "" for r in caplog.records)
    for secret in (GHP, ":pw@", AKIA, JWT):  # the traceback shows int()'s message
        assert secret not in text, secret
    assert "token *** rejected by https://u:***@h" in caplog.text


# ------------------------------------------------------------------ argv


def external(**extra: Any) -> dict[str, Any]:
    return {
        "ext": {"type": "stdio", "command": "srv", "env": {"SERVICE_TOKEN": "envsecret"}},
        "remote": {
            "type": "http",
            "url": "https://u:urlsecret@h/mcp",
            "headers": {"Authorization": "Bearer headersecret"},
        },
        **extra,
    }


def test_an_mcp_config_with_external_servers_goes_to_a_private_file(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir(mode=0o700)
    argv = build_argv(
        ClaudeAgentOptions(mcp_servers=external()), cli_path="claude", spill_dir=str(spill)
    )
    line = " ".join(argv)
    for secret in ("envsecret", "urlsecret", "headersecret"):
        assert secret not in line
    path = Path(argv[argv.index("--mcp-config") + 1])
    assert path.parent == spill
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    servers = json.loads(path.read_text())["mcpServers"]
    assert servers["ext"]["env"] == {"SERVICE_TOKEN": "envsecret"}  # the CLI still gets them


def test_json_text_and_settings_with_secrets_go_to_files_too(tmp_path: Path) -> None:
    text = json.dumps({"mcpServers": external()})
    settings = json.dumps({"env": {"API_BASE": "x", "SOME_VAR": "settingsecret"}})
    argv = build_argv(
        ClaudeAgentOptions(mcp_servers=text, settings=settings),
        cli_path="claude",
        spill_dir=str(tmp_path),
    )
    line = " ".join(argv)
    assert "envsecret" not in line and "settingsecret" not in line
    for flag in ("--mcp-config", "--settings"):
        path = Path(argv[argv.index(flag) + 1])
        assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_in_process_servers_alone_stay_inline(tmp_path: Path) -> None:
    server = create_sdk_mcp_server("calc", tools=[deploy])
    argv = build_argv(
        ClaudeAgentOptions(mcp_servers={"calc": server}), cli_path="claude", spill_dir=str(tmp_path)
    )
    value = argv[argv.index("--mcp-config") + 1]
    assert json.loads(value) == {"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}
    assert os.listdir(tmp_path) == []


# the pieces the patterns are made of, so that short texts come close to matching
_NEAR = st.sampled_from(
    ["sk-ant-", "sk_live_", "xoxb-", "AKIA", "eyJ", "basic ", "bearer ", "token", "a", "Z",
     "0", "-", "_", ".", " ", "\t", "/", "@", "?", "&", "'", '"', "-----BEGIN "]
)  # fmt: skip


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(_NEAR, max_size=8)
    .map("".join)
    .filter(lambda t: len(t) < 14 and ":" not in t and "=" not in t)
)
def test_short_texts_without_colon_or_equals_skip_the_patterns_safely(text: str) -> None:
    # redact_text returns such texts without running the patterns: running them all
    # must find nothing in them either
    for pattern in redact_shapes():
        assert pattern.search(text) is None, (pattern.pattern, text)
    assert redact_text(text) is text


def test_the_shortest_shaped_secrets_are_still_masked() -> None:
    assert redact_text("basic abcdefgh") == "basic ***"  # 14 characters, no : or =
    assert redact_text("token=b") == "token=***"
    assert redact_text("pwd:x") == "pwd:***"


@pytest.mark.timeout(120)  # a hang bound: quadratic matching took hours here
@pytest.mark.parametrize("unit", ["a-", "a_", "a.", "x://a:", "eyJa.", 'password="', "?token"])
def test_redaction_stays_linear_on_long_hostile_text(unit: str) -> None:
    text = (unit * 100_000)[:200_000]
    masked = redact_text(text + f" {ANT}")
    assert masked.endswith(" ***") and ANT not in masked


@pytest.mark.anyio
async def test_a_handler_exception_reaches_the_model_without_its_secret(
    anyio_backend: str,
) -> None:
    server = create_sdk_mcp_server("s", tools=[deploy])["instance"]
    reply = await server.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "deploy", "arguments": {"target": "prod"}}}
    )  # fmt: skip
    assert reply is not None
    (block,) = reply["result"]["content"]
    assert reply["result"]["isError"] and ANT not in block["text"]
    assert block["text"] == "could not log in with *** to prod"
