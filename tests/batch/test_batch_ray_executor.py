"""The Ray executor's driver where no cluster is needed: options it refuses to ship,
Ray not installed, and an address nothing listens at (the cluster tests are in
``test_batch_ray.py``)."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import anyio
import pytest

from ccwire import ClaudeAgentOptions, HookMatcher
from ccwire._batch.ray_executor import _probe, portable_options
from ccwire.batch import BatchConfigError, BatchState, run_batch

from .spawners import counting

LIMIT = 60


def test_servers_that_are_not_in_process_travel_as_they_are() -> None:
    servers = {"files": {"type": "stdio", "command": "files-server"},
               "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}  # fmt: skip
    shipped = portable_options(ClaudeAgentOptions(mcp_servers=servers))  # type: ignore[arg-type]
    assert shipped.mcp_servers == servers
    assert portable_options(ClaudeAgentOptions(mcp_servers="servers.json")).mcp_servers == (
        "servers.json"
    )


async def _note(*_: object) -> dict[str, object]:
    return {}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[_note])]}),
         r"hooks='package\.module:HOOKS'"),
        (ClaudeAgentOptions(spawn_claude_code_process=counting),
         r"spawn='package\.module:spawner'"),
    ],
)  # fmt: skip
def test_in_process_objects_must_travel_by_reference(
    options: ClaudeAgentOptions, message: str
) -> None:
    with pytest.raises(BatchConfigError, match=message):
        portable_options(options)


@pytest.mark.anyio
async def test_the_ray_executor_without_ray_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with anyio.fail_after(LIMIT), pytest.raises(BatchConfigError, match=r"ccwire\[ray\]"):
        async with run_batch([{"id": "a", "prompt": "x"}], executor="ray") as batch:
            await batch.collect()
    assert (batch.state, batch.submitted) == (BatchState.FAILED, 0)


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as server:
        return int(server.getsockname()[1])


@pytest.mark.anyio
async def test_an_address_nothing_listens_at_fails_at_once(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # joined already (by another test): no address is tried
        pytest.skip("Ray is initialized in this process")
    address = f"127.0.0.1:{closed_port()}"
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(LIMIT), pytest.raises(BatchConfigError) as caught:
        async with run_batch([{"id": "a", "prompt": "x"}], executor="ray",
                             ray_address=address, output=out) as batch:  # fmt: skip
            await batch.collect()
    assert f"cannot join Ray at {address}: Connection refused" in str(caught.value)
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)
    assert not ray.is_initialized()  # Ray itself was never asked
    assert out.read_text() == ""


@pytest.mark.parametrize("address", ["auto", "local", "ray://head", "head:port", ":6379"])
def test_addresses_that_are_not_host_and_port_are_left_to_ray(address: str) -> None:
    _probe(address)  # no connection tried, no error: Ray resolves these itself
