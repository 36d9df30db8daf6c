"""Aggregate reads: stats, timeline, temporal stats, hierarchy and ping (served by retrieval)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query

from exocortex.api.limits import HIERARCHY_EPISODES_MAX, ID_MAX, NAMESPACE_MAX, TIMELINE_LIMIT_MAX
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.entity_reads import report_body
from exocortex.gateway.routers.when import parse_bound, zone
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api", tags=["insights"])

Namespace = Annotated[
    str | None,
    Query(
        min_length=1, max_length=NAMESPACE_MAX, description="Only this namespace (default: all)."
    ),
]
TimeZone = Annotated[str | None, Query(description="IANA zone that days are counted in.")]


def _request(namespace: str | None, params: dict[str, Any]) -> retrieval_pb2.ReportRequest:
    return retrieval_pb2.ReportRequest(
        namespace=namespace or "",
        namespace_set=namespace is not None,
        params_json=json.dumps({k: v for k, v in params.items() if v is not None}),
    )


@router.get("/stats")
async def stats(backends: BackendsDep, namespace: Namespace = None) -> dict[str, Any]:
    """Memory counts: a memory is an active or archived root row; chunks are counted apart."""
    reply = await backends.retrieval.GetStats(
        _request(namespace, {}), timeout=backends.settings.rpc_timeout_seconds
    )
    return report_body(reply)


@router.get("/timeline")
async def timeline(
    backends: BackendsDep,
    namespace: Namespace = None,
    after: str | None = None,
    before: str | None = None,
    limit: Annotated[int, Query(ge=1, le=TIMELINE_LIMIT_MAX)] = 30,
    include_memories: bool = True,
    timezone: TimeZone = None,
    mode: Annotated[str, Query(pattern="^(days|decisions|lineage)$")] = "days",
    memory_id: Annotated[str | None, Query(max_length=ID_MAX)] = None,
) -> Any:
    """`days` (default): `[{date, count, memories}]`, newest day first, days in `timezone`.
    `decisions`: decision memories with what each supersedes. `lineage`: the supersession chain
    through `memory_id`, oldest first."""
    tz = zone(timezone)
    low = parse_bound(after, tz, upper=False, field="after")
    high = parse_bound(before, tz, upper=True, field="before")
    reply = await backends.retrieval.GetTimeline(
        _request(
            namespace,
            {
                "mode": mode,
                "after": low.isoformat() if low else None,
                "before": high.isoformat() if high else None,
                "limit": limit,
                "include_memories": include_memories,
                "timezone": tz.key,
                "memory_id": memory_id,
            },
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    body = report_body(reply)
    return body["days"] if mode == "days" else body


@router.get("/temporal-stats")
async def temporal_stats(
    backends: BackendsDep, namespace: Namespace = None, timezone: TimeZone = None
) -> dict[str, Any]:
    """Active days, average per active day, the busiest day, current and longest streaks."""
    reply = await backends.retrieval.GetTemporalStats(
        _request(namespace, {"timezone": zone(timezone).key}),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return report_body(reply)


@router.get("/hierarchy")
async def hierarchy(
    backends: BackendsDep,
    namespace: Namespace = None,
    month: Annotated[str | None, Query(pattern=r"^\d{4}-\d{2}$")] = None,
    after: str | None = None,
    before: str | None = None,
    max_episodes: Annotated[int, Query(ge=1, le=HIERARCHY_EPISODES_MAX)] = 20,
    timezone: TimeZone = None,
) -> dict[str, Any]:
    """Epochs (`epoch` tag) → themes (`narrative` tag) → episodes (the week before a theme)."""
    tz = zone(timezone)
    low = parse_bound(after, tz, upper=False, field="after")
    high = parse_bound(before, tz, upper=True, field="before")
    reply = await backends.retrieval.GetHierarchy(
        _request(
            namespace,
            {
                "month": month,
                "after": low.isoformat() if low else None,
                "before": high.isoformat() if high else None,
                "max_episodes": max_episodes,
                "timezone": tz.key,
            },
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return report_body(reply)


@router.get("/ping")
async def ping(backends: BackendsDep, namespace: Namespace = None) -> dict[str, Any]:
    reply = await backends.retrieval.Ping(
        _request(namespace, {}), timeout=backends.settings.rpc_timeout_seconds
    )
    return report_body(reply)
