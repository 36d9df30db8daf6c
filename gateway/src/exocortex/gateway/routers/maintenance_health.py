"""Index and retrieval health over REST (served by the maintenance service): the health
checks, the retrieval regression runs, and the index reconciliation."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from exocortex.api.limits import REGRESSION_RUNS_MAX
from exocortex.api.maintenance import Health, JobRunOut, ReindexBody, ReportOut
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


@router.get("/retrieval-regression/runs")
async def regression_runs(
    backends: BackendsDep, limit: Annotated[int, Query(ge=1, le=REGRESSION_RUNS_MAX)] = 10
) -> dict[str, Any]:
    """`{runs: [{run_id, query_count, alerts, avg_overlap, created_at}]}`, newest first."""
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).ListRegressionRuns(
        maintenance_pb2.ListRecordsRequest(limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    result: dict[str, Any] = json.loads(reply.json)
    return result


@router.get("/retrieval-regression/latest")
async def regression_latest(backends: BackendsDep) -> dict[str, Any]:
    """`{run_id, golden_count, results: [{query, overlap_at_10, avg_rank_shift, exact_order,
    alert, created_at}]}` of the latest run."""
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).GetLatestRegressionRun(
        maintenance_pb2.ListRecordsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    result: dict[str, Any] = json.loads(reply.json)
    return result


@router.get("/maintenance/health", response_model=Health)
async def health_checks(backends: BackendsDep, namespace: NamespaceQuery = None) -> Any:
    """The eight health checks (embedding gap, tag sparsity, entity orphans, retrieval desert,
    importance collapse, consolidation backlog, growth stall, stale access), each ok, warn or
    critical with a suggestion; `overall` is the worst."""
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).Health(
        maintenance_pb2.ListRecordsRequest(namespace=namespace or ""),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


@router.post("/maintenance/reindex", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def reindex(body: ReindexBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Compare the vector and keyword indexes with Postgres and repair what differs
    (`{expected, repaired: {"<index>/<reason>": n}, seconds}`). Needs a key for all namespaces."""
    run = await start_job(
        backends,
        "reindex",
        dry_run=False,
        params={},
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)
