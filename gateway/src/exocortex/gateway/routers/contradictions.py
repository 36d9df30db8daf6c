"""Contradictions over REST (served by the maintenance service): batch detection, the list,
and resolving (optionally keeping one side) or dismissing one."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Response

from exocortex.api.limits import CONTRADICTION_STATUS_MAX, ID_MAX, MAINTENANCE_LIST_MAX
from exocortex.api.maintenance import (
    Contradiction,
    ContradictionPatch,
    DetectBody,
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

ContradictionId = Annotated[str, Path(min_length=1, max_length=ID_MAX)]


# Declared before the `{contradiction_id}` routes, so that `detect` is never taken for an id.
@router.post(
    "/contradictions/detect", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES
)
async def detect_contradictions(
    backends: BackendsDep,
    response: Response,
    # The original takes no body: a missing or empty one means every default.
    body: Annotated[DetectBody, Body(default_factory=DetectBody)],
) -> dict[str, Any]:
    """Batch detection over the namespace(s); new pairs are recorded as pending. The body
    is optional."""
    params = {"min_similarity": body.min_similarity} if body.min_similarity is not None else {}
    run = await start_job(
        backends,
        "contradictions",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)


@router.get("/contradictions", response_model=list[Contradiction])
async def list_contradictions(
    backends: BackendsDep,
    contradiction_status: Annotated[
        str,
        Query(
            alias="status",
            max_length=CONTRADICTION_STATUS_MAX,
            description="pending (default), resolved, dismissed or all; anything else is a 400",
        ),
    ] = "pending",
    namespace: NamespaceQuery = None,
    limit: Annotated[int, Query(ge=1, le=MAINTENANCE_LIST_MAX)] = 50,
) -> Any:
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).ListContradictions(
        maintenance_pb2.ListRecordsRequest(
            namespace=namespace or "", limit=limit, status=contradiction_status
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


@router.get("/contradictions/{contradiction_id}", response_model=Contradiction)
async def get_contradiction(
    contradiction_id: ContradictionId,
    backends: BackendsDep,
    namespace: NamespaceQuery = None,
) -> Any:
    """One contradiction (any age; the seed looked only at the newest 50)."""
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).GetContradiction(
        maintenance_pb2.RecordRef(id=contradiction_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


@router.patch("/contradictions/{contradiction_id}", response_model=Contradiction)
async def update_contradiction(
    contradiction_id: ContradictionId, body: ContradictionPatch, backends: BackendsDep
) -> Any:
    """Resolve (optionally keeping one side: the other is archived, superseded by it) or
    dismiss a contradiction."""
    request = maintenance_pb2.UpdateContradictionRequest(id=contradiction_id, status=body.status)
    if body.resolution is not None:
        request.resolution = body.resolution
    if body.keep_id is not None:
        request.keep_id = body.keep_id
    reply: maintenance_pb2.JsonReply = await maintenance_stub(backends).UpdateContradiction(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return json.loads(reply.json)
