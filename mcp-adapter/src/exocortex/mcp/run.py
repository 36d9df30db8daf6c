"""Run the server on a transport; shared by ``python -m exocortex.mcp`` and ``exo mcp``."""

from __future__ import annotations

import uvicorn

from exocortex.core.logging import configure_logging, get_logger
from exocortex.core.reference_env import note_aliases
from exocortex.mcp.common import Transport
from exocortex.mcp.http import http_app
from exocortex.mcp.server import create_server
from exocortex.mcp.settings import Attribution, McpSettings

__all__ = ["Transport", "serve"]


def serve(transport: Transport, *, host: str | None = None, port: int | None = None) -> None:
    """Serve until the client goes away (stdio) or the process is signalled (HTTP).

    Over stdio, stdout carries the protocol, so every log line goes to stderr.
    """
    settings = McpSettings()
    configure_logging("mcp-adapter", fmt=settings.log_format, level=settings.log_level)
    attribution = Attribution()
    note_aliases(attribution, get_logger("exocortex.mcp"))
    server = create_server(settings, attribution, transport=transport)
    if transport == "stdio":
        server.run("stdio")
        return
    bind, served = host or settings.host, port or settings.port
    uvicorn.run(
        http_app(server, settings, host=bind, port=served),
        host=bind,
        port=served,
        log_level=settings.log_level.lower(),
    )
