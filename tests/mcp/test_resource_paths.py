"""Resource templates cannot be walked out of: path variables are checked after decoding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ccwire import McpError, SdkMcpServer, create_sdk_mcp_server, resource

pytestmark = pytest.mark.anyio

INVALID_PARAMS = -32602


def docs_server(root: Path, calls: list[str]) -> SdkMcpServer:
    """A server whose templates join their variables to ``root``, as handlers do."""

    @resource("file:///docs/{name}", mime_type="text/plain")
    def doc(name: str) -> str:
        calls.append(name)
        return (root / name).read_text()

    @resource("tree:///{+path}", mime_type="text/plain")
    def tree(path: str) -> str:
        calls.append(path)
        return (root / path).read_text()

    @resource("seg://x{/part}")
    def seg(part: str) -> str:
        calls.append(part)
        return (root / part).read_text()

    @resource("users://{user_id}/profile{?fields}")
    def profile(user_id: str, fields: str = "") -> str:
        calls.append(fields)
        return f"{user_id}:{fields}"

    instance: SdkMcpServer = create_sdk_mcp_server("docs", resources=[doc, tree, seg, profile])[
        "instance"
    ]
    return instance


async def read(server: SdkMcpServer, uri: str) -> dict[str, Any]:
    reply = await server.handle(
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": uri}}
    )
    assert reply is not None
    return reply


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("hello")
    (tmp_path / "docs" / "sub").mkdir()
    (tmp_path / "docs" / "sub" / "b.txt").write_text("nested")
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    return tmp_path / "docs"


ESCAPES = [
    "file:///docs/..%2Fsecret.txt",  # the encoded separator of the issue
    "file:///docs/..%2fsecret.txt",
    "file:///docs/..%5Csecret.txt",  # a backslash, encoded
    "file:///docs/%2E%2E%2Fsecret.txt",  # dots and separator, all encoded
    "file:///docs/%2e%2e",  # the parent itself
    "file:///docs/..",
    "file:///docs/%252E%252E%252Fsecret.txt",  # double encoding
    "file:///docs/%00a.txt",
    "tree:///../secret.txt",
    "tree:///sub/../../secret.txt",
    "tree:///sub/%2E%2E/%2E%2E/secret.txt",
    "tree:///sub%2F..%2F..%2Fsecret.txt",
    "tree:////etc/passwd",  # absolute after the template's own slash
    "tree:///%2Fetc%2Fpasswd",
    "tree:///C:/Windows/win.ini",
    "tree:///%5C%5Cserver%5Cshare",
    "seg://x/..",
    "seg://x/%2E%2E",
]


@pytest.mark.parametrize("uri", ESCAPES)
async def test_a_path_variable_cannot_leave_its_directory(
    root: Path, uri: str, anyio_backend: str
) -> None:
    calls: list[str] = []
    reply = await read(docs_server(root, calls), uri)
    assert "result" not in reply, reply
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "Invalid params" in reply["error"]["message"]
    assert calls == []  # the handler never ran
    assert "TOP SECRET" not in str(reply)


@pytest.mark.parametrize(
    ("uri", "text"),
    [
        ("file:///docs/a.txt", "hello"),
        ("file:///docs/a%2Etxt", "hello"),  # an encoded dot inside a name is fine
        ("tree:///sub/b.txt", "nested"),
        ("tree:///sub/./b.txt", "nested"),
        ("seg://x/a.txt", "hello"),
    ],
)
async def test_safe_paths_still_read(root: Path, uri: str, text: str, anyio_backend: str) -> None:
    reply = await read(docs_server(root, []), uri)
    assert reply["result"]["contents"][0]["text"] == text


async def test_query_values_are_not_path_checked(root: Path, anyio_backend: str) -> None:
    calls: list[str] = []
    reply = await read(docs_server(root, calls), "users://7/profile?fields=a/b")
    assert reply["result"]["contents"][0]["text"] == "7:a/b"


def test_match_raises_a_typed_error(root: Path) -> None:
    @resource("file:///docs/{name}")
    def doc(name: str) -> str:
        return name

    with pytest.raises(McpError, match="encoded path separator") as caught:
        doc.match("file:///docs/..%2Fx")
    assert caught.value.code == INVALID_PARAMS
    assert doc.match("file:///docs/ok.txt") == {"name": "ok.txt"}
