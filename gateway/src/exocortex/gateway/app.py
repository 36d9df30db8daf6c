"""The FastAPI application: REST ↔ gRPC, auth, CORS, limits, health, metrics, problem-JSON
errors, security headers, and the dashboard's static files."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from exocortex.core.logging import get_logger
from exocortex.gateway import auth, problems
from exocortex.gateway.backends import open_backends
from exocortex.gateway.host_guard import LoopbackHostMiddleware
from exocortex.gateway.input_guard import InputGuardMiddleware
from exocortex.gateway.limits import BodyLimitMiddleware
from exocortex.gateway.observe import ObserveMiddleware
from exocortex.gateway.openapi import build_openapi
from exocortex.gateway.origin_guard import OriginGuardMiddleware
from exocortex.gateway.routers import (
    analytics,
    backups,
    chat,
    consolidation,
    contradictions,
    curation,
    entity_reads,
    entity_writes,
    export,
    goals,
    health,
    insights,
    maintenance_health,
    maintenance_jobs,
    memories,
    reads,
    search,
    setting_schema,
    snapshot,
    whoami,
)
from exocortex.gateway.routers import settings as settings_routes
from exocortex.gateway.security_headers import SecurityHeadersMiddleware
from exocortex.gateway.settings import GatewaySettings
from exocortex.gateway.static import checkout_dashboard, mount_dashboard

log = get_logger(__name__)

DESCRIPTION = """Persistent memory for AI agents: store notes, decisions and facts; get the right
ones back by hybrid retrieval (dense vectors + BM25 fused with Reciprocal Rank Fusion).

**Auth.** When the gateway has API keys (`EXO_API_KEYS`; always when it binds a non-loopback
address), every `/api` route needs one: `Authorization: Bearer <key>` or `X-API-Key: <key>`.
A key may be read-only and may be limited to some namespaces. `/health` and `/metrics` are open.

**Errors** are RFC 9457 problem documents (`application/problem+json`) whose `detail` says what
to fix and whose `field` names the offending request field."""

# The /api routers, in matching order. Static paths must come before a router whose
# `/{id}` path would shadow them (reads last for /api/memories/{memory_id}).
API_ROUTERS: tuple[APIRouter, ...] = (
    memories.router,
    search.router,
    goals.router,
    entity_reads.router,
    entity_writes.router,
    insights.router,
    snapshot.router,
    setting_schema.router,
    settings_routes.router,
    export.router,
    chat.router,
    maintenance_jobs.router,
    consolidation.router,
    contradictions.router,
    maintenance_health.router,
    curation.router,
    whoami.router,
    analytics.router,
    backups.router,
    reads.router,
)


def _origins(raw: str) -> list[str]:
    return [o.strip().rstrip("/") for o in raw.split(",") if o.strip()]


def create_app(settings: GatewaySettings, routers: tuple[APIRouter, ...] = API_ROUTERS) -> FastAPI:
    """Raises ``auth.KeyFormatError`` when the keys are malformed, or missing on a
    non-loopback bind: the gateway refuses to start rather than serve an open API."""
    keyring = auth.keyring_for(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            app.state.backends = await open_backends(stack, settings)
            # Everything built so far (routes, schemas, clients) lives as long as the process:
            # frozen out of the collector, so a full collection no longer walks it on the
            # request path (it was a third of the gateway's time per search).
            gc.collect()
            gc.freeze()
            yield

    app = FastAPI(
        title="Exocortex",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.keyring = keyring
    app.state.settings = settings
    problems.install(app)

    # Innermost: it buffers the body, which the body limit around it has already bounded.
    app.add_middleware(InputGuardMiddleware)

    # Next (added early), so an over-long body fails inside the route's own read and is
    # answered by the problem handler, not lost in another middleware's task group.
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)

    # Inside Observe (a refusal is logged and counted), before any body is read.
    app.add_middleware(OriginGuardMiddleware, allowed_origins=_origins(settings.cors_origins))
    app.add_middleware(ObserveMiddleware)

    # Added last = outermost: CORS wraps every answer (even a 413).
    origins = _origins(settings.cors_origins)
    if origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=origins,
            allow_methods=["GET", "POST", "PATCH", "PUT", "DELETE", "OPTIONS"],
            allow_headers=["Authorization", "X-API-Key", "Content-Type", "X-Correlation-Id"],
            expose_headers=["X-Correlation-Id", "Content-Disposition"],
            max_age=600,
        )
    if not keyring.enabled:
        # Outside everything but the security headers: without keys, a request for a name
        # other than loopback is refused before anything reads it (see host_guard).
        app.add_middleware(LoopbackHostMiddleware)
    # Outermost: every answer, a refused Host or an oversized body too, carries the
    # Content-Security-Policy and the other security headers (see security_headers).
    app.add_middleware(SecurityHeadersMiddleware)

    app.include_router(health.router)
    guarded: dict[str, Any] = {
        "dependencies": [Depends(auth.authorize)],
        "responses": problems.PROBLEM_RESPONSES,
    }
    for router in routers:
        app.include_router(router, **guarded)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = build_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    dashboard = settings.dashboard_dir or checkout_dashboard()
    if dashboard is not None:
        mount_dashboard(app, Path(dashboard))
    return app
