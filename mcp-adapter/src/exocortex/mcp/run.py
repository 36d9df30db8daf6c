"""Run the server on a transport; shared by ``python -m exocortex.mcp`` and ``exo mcp``."""

from __future__ import annotations

from typing import Literal

from exocortex.core.logging import configure_logging
from exocortex.mcp.server import create_server
from exocortex.mcp.settings import McpSettings

Transport = Literal["stdio", "http"]


def serve(transport: Transport, *, host: str | None = None, port: int | None = None) -> None:
    """Serve until the client goes away (stdio) or the process is signalled (HTTP).

    Over stdio, stdout carries the protocol, so every log line goes to stderr.
    """
    settings = McpSettings()
    configure_logging("mcp-adapter", fmt=settings.log_format, level=settings.log_level)
    server = create_server(settings)
    if transport == "stdio":
        server.run("stdio")
        return
    server.run(
        "streamable-http",
        host=host or settings.host,
        port=port or settings.port,
        streamable_http_path="/mcp",
    )
