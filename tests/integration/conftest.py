"""Shared by the integration tests: the MCP adapter in process, on the session stack's gateway."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio
from mcp import Client

from exocortex.mcp.server import create_server
from exocortex.mcp.settings import Attribution, McpSettings


@pytest_asyncio.fixture
async def mcp(gateway_url: str) -> AsyncIterator[Client]:
    """The adapter in process, on the stack's gateway; entered and left in one task (the
    client's task group must be)."""
    server = create_server(McpSettings(gateway_url=gateway_url), Attribution(agent="pytest"))
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with Client(server) as client:
                ready.set_result(client)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        done.set()
        await task
