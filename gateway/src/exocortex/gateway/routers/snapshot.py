"""The project snapshot (served by the retrieval service's ProjectSnapshot read)."""

from __future__ import annotations

from datetime import UTC
from typing import Annotated, Any

from fastapi import APIRouter, Query

from exocortex.api.limits import (
    NAMESPACE_MAX,
    PROJECT_NAME_MAX,
    SNAPSHOT_DAYS_MAX,
    SNAPSHOT_SECTION_MAX,
)
from exocortex.api.reads import Snapshot
from exocortex.gateway import admin_convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.search import compact_result
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api", tags=["insights"])


def _section_limit(default: int, what: str) -> Any:
    return Query(
        ge=1, le=SNAPSHOT_SECTION_MAX, description=f"At most this many {what} (default {default})."
    )


@router.get("/snapshot", response_model=Snapshot)
async def project_snapshot(
    backends: BackendsDep,
    project: Annotated[
        str,
        Query(
            min_length=1, max_length=PROJECT_NAME_MAX, description="The project's name (the query)."
        ),
    ],
    namespace: Annotated[str, Query(min_length=1, max_length=NAMESPACE_MAX)] = "default",
    days: Annotated[
        int, Query(ge=1, le=SNAPSHOT_DAYS_MAX, description="Recent activity window.")
    ] = 14,
    recent_limit: Annotated[int, _section_limit(10, "recent memories")] = 10,
    decisions_limit: Annotated[int, _section_limit(5, "decisions")] = 5,
    open_threads_limit: Annotated[int, _section_limit(5, "open threads")] = 5,
    techniques_limit: Annotated[int, _section_limit(5, "techniques")] = 5,
    goals_limit: Annotated[int, _section_limit(20, "active goals")] = 20,
) -> dict[str, Any]:
    """Where a project stands: compact searches for its name (recent activity, decisions, open
    threads, techniques; they do not count as access) and the active goals, in one read."""
    reply: retrieval_pb2.ProjectSnapshotReply = await backends.retrieval.ProjectSnapshot(
        retrieval_pb2.ProjectSnapshotRequest(
            namespace=namespace,
            project=project,
            days=days,
            recent_limit=recent_limit,
            decisions_limit=decisions_limit,
            open_threads_limit=open_threads_limit,
            techniques_limit=techniques_limit,
            goals_limit=goals_limit,
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {
        "project": reply.project,
        "namespace": namespace,
        "days": days,
        "since": reply.since.ToDatetime(tzinfo=UTC),
        "recent": [compact_result(r) for r in reply.recent],
        "decisions": [compact_result(r) for r in reply.decisions],
        "open_threads": [compact_result(r) for r in reply.open_threads],
        "techniques": [compact_result(r) for r in reply.techniques],
        "goals": [admin_convert.goal(g) for g in reply.goals],
        "degraded": list(reply.degraded),
    }
