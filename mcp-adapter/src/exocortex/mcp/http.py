"""The streamable HTTP transport: the SDK's app behind Host/Origin checks and a key check.

Over HTTP the adapter is a shared service, so it acts for each client with that client's own
API key and never with one of its own: a request without a key is answered 401 here (when the
gateway requires keys), and the key a request carries is the one its tool calls forward.
"""

from __future__ import annotations

import time

import httpx
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from exocortex.mcp.settings import McpSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

MCP_PATH = "/mcp"
# Whether the gateway wants keys changes only when it restarts; asking once a minute keeps a
# keyless request from costing a gateway round trip each time.
PROBE_TTL_SECONDS = 60.0
# A route every key, even a namespace-scoped read-only one, may call; without a key it
# answers 401 exactly when the gateway requires keys.
PROBE_PATH = "/api/settings"


def has_client_key(headers: Headers) -> bool:
    authorization = headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return True
    return bool(headers.get("x-api-key", "").strip())


class GatewayKeyProbe:
    """Whether the gateway requires an API key, asked without one and remembered a while."""

    def __init__(self, gateway_url: str, timeout: float) -> None:
        self._url = gateway_url.rstrip("/") + PROBE_PATH
        self._timeout = timeout
        self._answer: bool | None = None
        self._asked_at = 0.0

    async def keys_required(self) -> bool:
        now = time.monotonic()
        if self._answer is not None and now - self._asked_at < PROBE_TTL_SECONDS:
            return self._answer
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                status = (await http.get(self._url)).status_code
        except httpx.HTTPError:
            # An unreachable gateway: the tool calls will say so; a keyless request cannot
            # gain anything meanwhile, since no key is ever added to it.
            return False
        self._answer, self._asked_at = status == 401, now
        return self._answer


class ClientKeyRequired:
    """ASGI middleware: 401 for an MCP request that carries no API key of its own while the
    gateway requires one, before the MCP session sees it."""

    def __init__(self, app: ASGIApp, probe: GatewayKeyProbe) -> None:
        self._app = app
        self._probe = probe

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] == "http"
            and not has_client_key(Headers(scope=scope))
            and await self._probe.keys_required()
        ):
            response = JSONResponse(
                {
                    "error": "an API key is required: send 'Authorization: Bearer <key>' "
                    "or 'X-API-Key: <key>' with a key of the Exocortex gateway"
                },
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        await self._app(scope, receive, send)


def transport_security(settings: McpSettings, port: int) -> TransportSecuritySettings:
    """DNS-rebinding protection, on whatever address the adapter binds: only the listed host
    names (default: the loopback names with this port) reach the MCP endpoint."""
    hosts = settings.allowed_host_list(port)
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def http_app(server: MCPServer, settings: McpSettings, *, host: str, port: int) -> ASGIApp:
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(settings, port),
        host=host,
    )
    probe = GatewayKeyProbe(settings.gateway_url, settings.timeout_seconds)
    return ClientKeyRequired(app, probe)
