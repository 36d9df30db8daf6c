"""Fixtures for the MCP adapter's tests: an in-process MCP client on the session's stack."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest_asyncio
from mcp import Client
from mcp.types import CallToolResult, TextContent

from exocortex.mcp.server import create_server
from exocortex.mcp.settings import Attribution, McpSettings

# The adapter's message for a route the gateway does not serve (a bare 404 or a 405). Every
# tool's route exists on this server, so this message in a test is a failure, never a skip: a
# renamed or removed route must turn the MCP tests red.
UNSUPPORTED = "does not support"


@asynccontextmanager
async def held(client: Client) -> AsyncIterator[Client]:
    """Enter and leave ``client`` in one task of its own.

    The client owns an anyio task group, which must be exited by the task that entered it;
    pytest-asyncio runs a fixture's set-up and tear-down in different tasks.
    """
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with client as entered:
                ready.set_result(entered)
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


@pytest_asyncio.fixture
async def mcp(gateway_url: str) -> AsyncIterator[Client]:
    """The SDK's client connected in-process to the adapter, which talks to the real gateway."""
    settings = McpSettings(gateway_url=gateway_url, api_key=os.environ.get("EXO_TEST_API_KEY"))
    server = create_server(settings, Attribution(agent="pytest", provider="exocortex-tests"))
    async with held(Client(server)) as client:
        yield client


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(client: Client, tool: str, **arguments: Any) -> tuple[dict[str, Any], str]:
    """Call a tool that must succeed: its structured content and its text.

    A tool whose REST route the gateway lacks fails here like any other error, naming the route.
    """
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    text = text_of(result)
    assert not result.is_error, f"{tool} failed: {text}"
    assert result.structured_content is not None
    return result.structured_content, text


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a tool error; return the message.

    The error must be the tool's own: a route the gateway lacks is a failure, not the expected
    error.
    """
    result = await client.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    text = text_of(result)
    assert result.is_error, f"{tool} succeeded but should have failed: {text}"
    assert UNSUPPORTED not in text, f"{tool}: the gateway lacks its route: {text}"
    return text
