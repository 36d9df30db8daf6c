"""Consolidation over REST (served by the maintenance service): clusters of similar memories,
their consolidation into summary memories, and its history."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from exocortex.api.limits import MAINTENANCE_LIST_MAX
from exocortex.api.maintenance import (
    AutoConsolidateBody,
    ConsolidateBody,
    Consolidation,
    JobRunOut,
    ReportOut,
)
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.maintenance_runs import (
    RUN_RESPONSES,
    NamespaceQuery,
    maintenance_stub,
    report_or_run,
    start_job,
)
from exocortex.proto.v1 import maintenance_pb2

router = APIRouter(prefix="/api", tags=["maintenance"])


@router.post(
    "/consolidate",
    response_model=ReportOut | JobRunOut,
    responses=RUN_RESPONSES,
)
async def consolidate(
    body: ConsolidateBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Clusters of similar memories (dry run, the default) or their consolidation: a summary
    memory per cluster, the sources superseded by it (archived, never deleted)."""
    params = body.model_dump(exclude={"dry_run", "namespace", "wait_seconds"})
    run = await start_job(
        backends,
        "consolidation",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)


@router.post("/auto-consolidate", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def auto_consolidate(
    body: AutoConsolidateBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Consolidation at the stricter automatic threshold (0.85), at most 5 clusters."""
    run = await start_job(
        backends,
        "auto-consolidation",
        dry_run=False,
        params={},
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    out = report_or_run(run, response)
    if run.status == "succeeded":
        done = out.get("consolidated") or []
        # The seed's auto-consolidate answered in camelCase: kept beside the report's fields.
        out |= {
            "clustersFound": out.get("clusters_found", 0),
            "clustersConsolidated": len(done),
            "memoriesMerged": sum(len(d["members"]) for d in done),
            "summaryIds": [d["summary_id"] for d in done],
        }
    return out


@router.get("/consolidations", response_model=list[Consolidation])
async def consolidations(
    backends: BackendsDep,
    namespace: NamespaceQuery = None,
    limit: Annotated[int, Query(ge=1, le=MAINTENANCE_LIST_MAX)] = 20,
) -> Any:
    """Consolidation history, newest first."""
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).ListConsolidations(
        maintenance_pb2.ListRecordsRequest(namespace=namespace or "", limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)
