"""The adapter as agents launch it: `exo mcp` over stdio, `exo mcp --transport http`, and the
MCP Inspector CLI (an independent client, from npm) against it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from exocortex.core.runtime.stack import Stack
from exocortex.testing.gateway import serve_gateway
from exocortex.testing.processes import listening_process

from .conftest import call, call_error, held

pytestmark = pytest.mark.e2e

EXO = str(Path(sys.executable).with_name("exo"))
INSPECTOR = "@modelcontextprotocol/inspector@0.15"


def adapter_env(gateway_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXO_")}
    env |= {
        "EXO_MCP_GATEWAY_URL": gateway_url,
        "EXO_DEFAULT_AGENT": "transport-test",
        "EXO_LOG_LEVEL": "warning",
    }
    if key := os.environ.get("EXO_TEST_API_KEY"):
        env["EXO_MCP_API_KEY"] = key
    return env


async def store_then_search(client: Client, namespace: str, content: str, query: str) -> None:
    stored, text = await call(client, "memory_store", content=content, namespace=namespace)
    assert text.startswith(f"Stored memory (id: {stored['id']}")
    found, text = await call(client, "memory_search", query=query, namespace=namespace)
    assert found["results"][0]["id"] == stored["id"]
    assert text.startswith(f"Found {found['count']} memories ({found['mode']}):")
    assert stored["id"] in text


async def test_exo_mcp_over_stdio(gateway_url: str, namespace: str) -> None:
    params = StdioServerParameters(command=EXO, args=["mcp"], env=adapter_env(gateway_url))
    async with held(Client(params)) as client:
        tools = (await client.list_tools()).tools
        assert len(tools) == 30
        await store_then_search(
            client,
            namespace,
            "The stdio transport is what desktop agents launch.",
            "how do desktop agents start the server?",
        )
        fetched, _ = await call(client, "memory_search", query="stdio", namespace=namespace)
        assert fetched["count"] == 1


@pytest.fixture
def http_adapter(gateway_url: str) -> Iterator[str]:
    with serve_http_adapter(gateway_url) as url:
        yield url


@contextmanager
def serve_http_adapter(gateway_url: str, **env: str) -> Iterator[str]:
    """`exo mcp --transport http` on a free port; yields the MCP endpoint URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with listening_process(
        [EXO, "mcp", "--transport", "http", "--port", str(port)],
        adapter_env(gateway_url) | env,
        port,
        what="exo mcp --transport http",
        start_timeout=30,
        stop_timeout=10,
    ):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_exo_mcp_over_streamable_http(http_adapter: str, namespace: str) -> None:
    async with held(Client(http_adapter)) as client:
        assert len((await client.list_tools()).tools) == 30
        await store_then_search(
            client,
            namespace,
            "Remote agents reach the memory over streamable HTTP on port 3211.",
            "which port do remote agents use?",
        )


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
RW_KEY = "mcp-rw-key-0123456789abcdef"
RO_KEY = "mcp-ro-key-0123456789abcdef"


@pytest_asyncio.fixture
async def guarded_gateway(exo_stack: Stack) -> AsyncIterator[str]:
    """A second gateway in front of the session's services that requires API keys."""
    async with serve_gateway(exo_stack, EXO_API_KEYS=f"{RW_KEY},{RO_KEY}:ro") as url:
        yield url


async def test_over_http_each_client_brings_its_own_key(
    guarded_gateway: str, namespace: str
) -> None:
    # The adapter's own key (EXO_MCP_API_KEY) is for stdio; over HTTP a client without a key
    # is refused before any tool runs, even though the adapter has a read-write key.
    with serve_http_adapter(guarded_gateway, EXO_MCP_API_KEY=RW_KEY) as url:
        async with httpx2.AsyncClient() as http:
            bare = await http.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert bare.status_code == 401
        # A client's own key travels through: read-only may search but not store.
        headers = {"X-API-Key": RO_KEY}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with held(Client(transport)) as client:
                found, _ = await call(client, "memory_search", query="key", namespace=namespace)
                assert found["count"] == 0
                denied = await call_error(
                    client, "memory_store", content="Should not be stored.", namespace=namespace
                )
                assert "read-only" in denied
        headers = {"Authorization": f"Bearer {RW_KEY}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with held(Client(transport)) as client:
                await call(
                    client,
                    "memory_store",
                    content="Stored with the key of the client.",
                    namespace=namespace,
                )


def inspector(*args: str, env: dict[str, str]) -> Any:
    """Run the MCP Inspector CLI; its stdout is the JSON result."""
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx (Node.js) is not installed; the Inspector CLI comes from npm")
    done = subprocess.run(
        [npx, "--prefer-offline", "-y", INSPECTOR, "--cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0 and ("ENOTFOUND" in done.stderr or "EAI_AGAIN" in done.stderr):
        pytest.skip(f"npx cannot fetch {INSPECTOR}: {done.stderr[-500:]}")
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
    return json.loads(done.stdout)


def test_inspector_cli_lists_tools_and_calls_store_then_search(
    gateway_url: str, namespace: str
) -> None:
    env = dict(os.environ)
    server = ["-e", f"EXO_MCP_GATEWAY_URL={gateway_url}", "-e", "EXO_LOG_LEVEL=warning"]
    if key := os.environ.get("EXO_TEST_API_KEY"):
        server += ["-e", f"EXO_MCP_API_KEY={key}"]
    target = [*server, EXO, "mcp"]

    listed = inspector(*target, "--method", "tools/list", env=env)
    assert {t["name"] for t in listed["tools"]} >= {"memory_store", "memory_search", "goal_list"}

    stored = inspector(
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_store",
        "--tool-arg",
        "content=The Inspector is an independent MCP client from npm.",
        f"namespace={namespace}",
        env=env,
    )
    assert not stored.get("isError"), stored
    memory_id = stored["structuredContent"]["id"]
    assert stored["content"][0]["text"].startswith(f"Stored memory (id: {memory_id}")

    found = inspector(
        *target,
        "--method",
        "tools/call",
        "--tool-name",
        "memory_search",
        "--tool-arg",
        "query=independent MCP client",
        f"namespace={namespace}",
        env=env,
    )
    assert not found.get("isError"), found
    assert found["structuredContent"]["results"][0]["id"] == memory_id
    assert found["content"][0]["text"].startswith("Found ")
    assert memory_id in found["content"][0]["text"]
