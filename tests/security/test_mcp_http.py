"""MCP over HTTP: each client acts with its own API key, forwarded by the adapter (never the
adapter's own key, never shadowed by it); the adapter reads no file on its machine; its
Host/Origin protection stays on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import psycopg
import pytest_asyncio
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from exocortex.core.runtime.ports import free_port
from exocortex.mcp.http import http_app
from exocortex.mcp.server import create_server
from exocortex.mcp.settings import McpSettings

from .conftest import ADMIN, Keyed

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
SECTION = "This section carries enough body text to become a memory of its own, clearly. "


@asynccontextmanager
async def serve_adapter(gateway_url: str, **settings: Any) -> AsyncIterator[str]:
    """The adapter's streamable HTTP app, as ``exo mcp --transport http`` builds it, in front
    of ``gateway_url``; its own key is the all-namespace ADMIN key unless told otherwise, so
    any use of it would show. Yields the MCP endpoint URL."""
    port = free_port()
    config = McpSettings(gateway_url=gateway_url, api_key=ADMIN, port=port, **settings)
    server = create_server(config, transport="http")
    app = http_app(server, config, host="127.0.0.1", port=port)
    uv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="on")
    )
    task = asyncio.create_task(uv.serve())
    while not uv.started:
        if task.done():
            task.result()
            raise RuntimeError("the adapter stopped during start-up")
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        uv.should_exit = True
        await task


@pytest_asyncio.fixture
async def adapter(keyed: Keyed) -> AsyncIterator[str]:
    async with serve_adapter(keyed.url) as url:
        yield url


Call = Callable[..., Awaitable[CallToolResult]]


@asynccontextmanager
async def session(url: str, headers: dict[str, str]) -> AsyncIterator[Call]:
    """An MCP client session (the SDK's client) sending ``headers`` on every request."""
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60.0) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):

        async def call(tool: str, **arguments: Any) -> CallToolResult:
            result = await client.call_tool(tool, arguments)
            assert isinstance(result, CallToolResult)
            return result

        yield call


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def _count(db: psycopg.AsyncConnection[dict[str, Any]], namespace: str) -> int:
    cur = await db.execute("SELECT count(*) AS n FROM memories WHERE namespace = %s", (namespace,))
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


async def test_a_request_without_a_key_is_refused_by_the_adapter(
    adapter: str, keyed: Keyed
) -> None:
    # The adapter has a key of its own (ADMIN); it must not serve a keyless client with it.
    async with httpx.AsyncClient(timeout=30.0) as http:
        bare = await http.post(adapter, json=INITIALIZE, headers=MCP_HEADERS)
        assert bare.status_code == 401, bare.text
        assert bare.headers["www-authenticate"] == "Bearer"
        empty = await http.post(
            adapter, json=INITIALIZE, headers=MCP_HEADERS | {"Authorization": "Bearer"}
        )
        assert empty.status_code == 401
        with_key = await http.post(
            adapter, json=INITIALIZE, headers=MCP_HEADERS | {"X-API-Key": keyed.ro_key}
        )
        assert with_key.status_code == 200, with_key.text


async def test_the_clients_own_key_is_forwarded_and_never_shadowed(
    adapter: str, keyed: Keyed, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    # Read-only over X-API-Key: searches pass, writes are refused by the gateway, although
    # the adapter's own key (a bearer token, which the gateway would prefer) may write.
    async with session(adapter, {"X-API-Key": keyed.ro_key}) as call:
        found = await call("memory_search", query="anything", namespace=keyed.a)
        assert not found.is_error, text_of(found)
        denied = await call("memory_store", content="Should not be stored.", namespace=keyed.a)
        assert denied.is_error
        assert "read-only" in text_of(denied)
    async with session(adapter, {"Authorization": f"Bearer {keyed.ro_key}"}) as call:
        denied = await call("memory_store", content="Should not be stored.", namespace=keyed.a)
        assert denied.is_error
        assert "read-only" in text_of(denied)
    assert await _count(stack_db, keyed.a) == 0
    # A read-write key scoped to `a` writes there and only there.
    async with session(adapter, {"Authorization": f"Bearer {keyed.rw_key}"}) as call:
        stored = await call(
            "memory_store", content="Stored with the client's key.", namespace=keyed.a
        )
        assert not stored.is_error, text_of(stored)
        other = await call("memory_store", content="Not in b.", namespace=keyed.b)
        assert other.is_error
    assert await _count(stack_db, keyed.a) == 1
    assert await _count(stack_db, keyed.b) == 0


async def test_host_and_origin_protection_stays_on(keyed: Keyed) -> None:
    headers = MCP_HEADERS | {"X-API-Key": keyed.ro_key}
    async with serve_adapter(keyed.url) as url, httpx.AsyncClient(timeout=30.0) as http:
        rebound = await http.post(url, json=INITIALIZE, headers=headers | {"Host": "evil.example"})
        assert rebound.status_code == 421
        foreign = await http.post(
            url, json=INITIALIZE, headers=headers | {"Origin": "http://evil.example"}
        )
        assert foreign.status_code == 403
    # A published name (as compose sets it) is answered; others still are not.
    async with (
        serve_adapter(keyed.url, allowed_hosts="exo.internal:3211") as url,
        httpx.AsyncClient(timeout=30.0) as http,
    ):
        named = await http.post(
            url, json=INITIALIZE, headers=headers | {"Host": "exo.internal:3211"}
        )
        assert named.status_code == 200, named.text
        rebound = await http.post(url, json=INITIALIZE, headers=headers | {"Host": "evil.example"})
        assert rebound.status_code == 421


async def test_tools_read_no_file_of_the_adapters_machine(
    adapter: str,
    keyed: Keyed,
    tmp_path: Path,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text(f"## Secret\n{SECTION} hunter2\n")
    link = tmp_path / "link.md"
    link.symlink_to("/etc/passwd")
    paths = [
        "/etc/passwd",
        "~/.ssh/*",
        "~/.ssh/id_rsa",
        "../../../../etc/passwd",
        str(secret),
        str(tmp_path / "*.md"),
        str(link),
    ]
    async with session(adapter, {"Authorization": f"Bearer {keyed.rw_key}"}) as call:
        for path in paths:
            refused = await call("memory_ingest", path=path, namespace=keyed.a)
            assert refused.is_error, path
            assert "does not read files from its own machine" in text_of(refused)
            digest = await call("memory_digest_session", transcript_path=path, namespace=keyed.a)
            assert digest.is_error, path
            assert "`transcript`" in text_of(digest)
        assert await _count(stack_db, keyed.a) == 0
        # Content sent by the client is what the remote server ingests.
        sent = await call(
            "memory_ingest",
            files=[{"name": "handbook.md", "content": f"## One\n{SECTION}\n## Two\n{SECTION}2"}],
            namespace=keyed.a,
        )
        assert not sent.is_error, text_of(sent)
        assert sent.structured_content is not None
        assert sent.structured_content["stored"] == 2
        assert sent.structured_content["files"][0]["name"] == "handbook.md"
    cur = await stack_db.execute(
        "SELECT count(*) AS n FROM memories WHERE content LIKE %s OR content LIKE %s",
        ("%hunter2%", "%root:x:0:0%"),
    )
    row = await cur.fetchone()
    assert row is not None
    assert row["n"] == 0
