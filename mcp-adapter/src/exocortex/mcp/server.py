"""The Exocortex MCP server: the agent tools over the gateway's REST API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib.metadata import version

from exocortex.mcp.common import AppState, Transport
from exocortex.mcp.gateway import GatewayClient
from exocortex.mcp.schema import compact_tools
from exocortex.mcp.settings import Attribution, McpSettings
from exocortex.mcp.tools import goals, maintenance, overview, reads, writes
from mcp.server.mcpserver import MCPServer

INSTRUCTIONS = (
    "Exocortex is your persistent memory. At the start of a task call memory_context with the "
    "topic; search with memory_search (compact=true, then memory_get for the few you need). "
    "Store decisions, facts and outcomes with memory_store; mark memories that helped with "
    "memory_feedback."
)


def create_server(
    settings: McpSettings,
    attribution: Attribution | None = None,
    *,
    transport: Transport = "stdio",
) -> MCPServer:
    """The server for one transport. Over ``http`` it has no key of its own (each client's is
    forwarded) and reads no file on its machine (clients send content)."""
    who = attribution or Attribution()
    remote = transport == "http"

    @asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[AppState]:
        gateway = GatewayClient(
            settings.gateway_url,
            api_key=None if remote else settings.api_key,
            timeout=settings.timeout_seconds,
        )
        try:
            yield AppState(settings=settings, attribution=who, gateway=gateway, remote=remote)
        finally:
            await gateway.aclose()

    server: MCPServer = MCPServer(
        "exocortex",
        version=version("exocortex-mcp"),
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level=settings.log_level.upper(),  # type: ignore[arg-type]
    )
    for module in (writes, reads, overview, goals, maintenance):
        module.register(server)
    compact_tools(server)
    return server
