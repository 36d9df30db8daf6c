"""The FastAPI application: REST ↔ gRPC, health, metrics, problem-JSON errors."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI, Request, Response
from starlette.routing import Match

from exocortex.core.ids import new_id
from exocortex.core.logging import correlation_id, get_logger
from exocortex.gateway import metrics, problems
from exocortex.gateway.backends import open_backends
from exocortex.gateway.routers import health, memories, reads, search
from exocortex.gateway.settings import GatewaySettings

log = get_logger(__name__)

DESCRIPTION = """Persistent memory for AI agents: store notes, decisions and facts; get the right
ones back by hybrid retrieval (dense vectors + BM25 fused with Reciprocal Rank Fusion).

Errors are RFC 9457 problem documents (`application/problem+json`) whose `detail` says what to
fix and whose `field` names the offending request field."""


def _route_template(request: Request) -> str:
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match == Match.FULL:
            return str(getattr(route, "path", "unmatched"))
    return "unmatched"


def create_app(settings: GatewaySettings) -> FastAPI:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            app.state.backends = await open_backends(stack, settings)
            yield

    app = FastAPI(
        title="Exocortex",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    problems.install(app)

    @app.middleware("http")
    async def observe(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        token = correlation_id.set(request.headers.get("x-correlation-id") or new_id())
        start = time.perf_counter()
        declared = request.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > settings.max_body_bytes:
            response: Response = problems.problem(
                413, f"request body is larger than {settings.max_body_bytes} bytes"
            )
        else:
            response = await call_next(request)
        route = _route_template(request)
        metrics.HTTP_REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        metrics.HTTP_DURATION.labels(request.method, route).observe(time.perf_counter() - start)
        response.headers["x-correlation-id"] = correlation_id.get()
        correlation_id.reset(token)
        return response

    app.include_router(health.router)
    app.include_router(memories.router)
    app.include_router(search.router)
    # Last: its /api/memories/{memory_id} would otherwise shadow static read paths.
    app.include_router(reads.router)
    return app
