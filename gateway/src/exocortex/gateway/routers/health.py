from __future__ import annotations

import time
from datetime import UTC, datetime

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from exocortex.api.health import Health
from exocortex.gateway.deps import BackendsDep

router = APIRouter(tags=["health"])


@router.get(
    "/health",
    response_model=Health,
    responses={503: {"model": Health, "description": "A dependency is down"}},
)
async def health(backends: BackendsDep) -> JSONResponse:
    """Postgres, NATS and every service; 200 only when all are up. A service that listens but
    is not ready (waiting for Postgres, loading its model) is ``starting``."""
    checks = await backends.check()
    healthy = all(state == "ok" for state, _ in checks.values())
    body = Health(
        status="ok" if healthy else "degraded",
        db="connected" if checks["postgres"][0] == "ok" else "disconnected",
        uptime=round(time.monotonic() - backends.started, 3),
        timestamp=datetime.now(UTC),
        dependencies={
            name: {"status": state, "detail": detail} for name, (state, detail) in checks.items()
        },
    )
    return JSONResponse(body.model_dump(mode="json"), status_code=200 if healthy else 503)


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"description": "Prometheus text exposition", "content": {"text/plain": {}}}},
)
async def metrics() -> Response:
    """Prometheus metrics of the gateway (unauthenticated, like /health)."""
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
