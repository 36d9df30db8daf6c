"""Maintenance over REST (served by the maintenance service): the job list, runs and their
progress, and one route per job in the seed's shape (consolidate, contradictions, archive,
importance, re-embed, retrieval regression).

A job run is waited for up to `wait_seconds`; one still going then is answered **202** with the
run (`id`, `progress`), to poll at `GET /api/maintenance/jobs/runs/{run_id}`. Every write
needs a read-write key; a job that spans every namespace needs a key for all namespaces.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Response, status
from google.protobuf.timestamp_pb2 import Timestamp
from pydantic import BaseModel, ConfigDict, Field

from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc

router = APIRouter(prefix="/api", tags=["maintenance"])

DEFAULT_WAIT_SECONDS = 20.0
MAX_WAIT_SECONDS = 300.0
JobName = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9-]*$")]
Namespace = Annotated[str | None, Field(default=None, min_length=1, max_length=128)]
Wait = Annotated[float, Field(default=DEFAULT_WAIT_SECONDS, ge=0, le=MAX_WAIT_SECONDS)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class JobOut(BaseModel):
    name: str
    description: str
    scope: Literal["namespace", "global"]
    schedule: str = Field(description="Cron expression (UTC); empty: on demand only")
    last_run_at: str | None
    last_status: str
    next_run_at: str | None


class JobList(BaseModel):
    jobs: list[JobOut]
    count: int


class JobRunOut(BaseModel):
    id: int
    job: str
    status: Literal["running", "succeeded", "failed"]
    dry_run: bool
    params: dict[str, Any]
    report: dict[str, Any] | None
    progress: dict[str, Any]
    error: str | None
    started_at: str | None
    finished_at: str | None
    namespace: str | None
    trigger: str
    poll: str = Field(description="Where to poll this run")


class JobRunList(BaseModel):
    runs: list[JobRunOut]
    count: int


class RunJobBody(Strict):
    dry_run: bool = False
    params: dict[str, Any] = Field(default_factory=dict, description="The job's parameters")
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


RUN_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": JobRunOut, "description": "Still running: poll `poll`"},
}


def stamp(value: Timestamp) -> str:
    return value.ToDatetime(tzinfo=UTC).isoformat()


def _stub(backends: Any) -> maintenance_pb2_grpc.MaintenanceStub:
    return maintenance_pb2_grpc.MaintenanceStub(backends.channels["maintenance"])


def _run(run: maintenance_pb2.JobRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "job": run.job,
        "status": run.status,
        "dry_run": run.dry_run,
        "params": json.loads(run.params_json or "{}"),
        "report": json.loads(run.report_json) if run.report_json else None,
        "progress": json.loads(run.progress_json or "{}"),
        "error": run.error or None,
        "started_at": stamp(run.started_at) if run.HasField("started_at") else None,
        "finished_at": stamp(run.finished_at) if run.HasField("finished_at") else None,
        "namespace": run.namespace or None,
        "trigger": run.trigger,
        "poll": f"/api/maintenance/jobs/runs/{run.id}",
    }


async def _start(
    backends: Any,
    name: str,
    *,
    dry_run: bool,
    params: dict[str, Any],
    namespace: str | None,
    wait_seconds: float,
) -> maintenance_pb2.JobRun:
    reply: maintenance_pb2.JobRun = await _stub(backends).RunJob(
        maintenance_pb2.RunJobRequest(
            name=name,
            dry_run=dry_run,
            params_json=json.dumps(params),
            namespace=namespace or "",
            wait_seconds=wait_seconds,
        ),
        timeout=wait_seconds + backends.settings.rpc_timeout_seconds,
    )
    return reply


def _finished(run: maintenance_pb2.JobRun, response: Response) -> dict[str, Any] | None:
    """The report of a finished run; None (and 202) while it runs. A failed run is a 200
    with status failed and the error, like any finished run."""
    if run.status == "running":
        response.status_code = status.HTTP_202_ACCEPTED
        response.headers["Location"] = f"/api/maintenance/jobs/runs/{run.id}"
        return None
    return json.loads(run.report_json) if run.report_json else None


# ---------------------------------------------------------------------------------- jobs


@router.get("/maintenance/jobs", response_model=JobList)
async def list_jobs(backends: BackendsDep) -> dict[str, Any]:
    """Every job with its schedule, last run and next scheduled run."""
    reply: maintenance_pb2.ListJobsResponse = await _stub(backends).ListJobs(
        maintenance_pb2.ListJobsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    jobs = [
        {
            "name": j.name,
            "description": j.description,
            "scope": j.scope,
            "schedule": j.schedule,
            "last_run_at": stamp(j.last_run_at) if j.HasField("last_run_at") else None,
            "last_status": j.last_status,
            "next_run_at": stamp(j.next_run_at) if j.HasField("next_run_at") else None,
        }
        for j in reply.jobs
    ]
    return {"jobs": jobs, "count": len(jobs)}


@router.post("/maintenance/jobs/{name}/run", response_model=JobRunOut, responses=RUN_RESPONSES)
async def run_job(
    name: JobName, body: RunJobBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Start a job. Answers 200 with the finished run, or 202 with the run still going after
    `wait_seconds` (poll it). 409 when the job runs already."""
    run = await _start(
        backends,
        name,
        dry_run=body.dry_run,
        params=body.params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    _finished(run, response)
    return _run(run)


@router.get("/maintenance/jobs/runs", response_model=JobRunList)
async def list_runs(
    backends: BackendsDep,
    job: Annotated[str | None, Query(max_length=64)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> dict[str, Any]:
    """The latest runs, newest first (of one job when `job` is given)."""
    reply: maintenance_pb2.ListJobRunsResponse = await _stub(backends).ListJobRuns(
        maintenance_pb2.ListJobRunsRequest(job=job or "", limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    runs = [_run(r) for r in reply.runs]
    return {"runs": runs, "count": len(runs)}


@router.get("/maintenance/jobs/runs/{run_id}", response_model=JobRunOut)
async def get_run(
    run_id: Annotated[int, Path(ge=1, le=2**62)], backends: BackendsDep
) -> dict[str, Any]:
    """One run: its status, progress while it goes on, and its report once finished."""
    reply: maintenance_pb2.JobRun = await _stub(backends).GetJobRun(
        maintenance_pb2.GetJobRunRequest(id=run_id), timeout=backends.settings.rpc_timeout_seconds
    )
    return _run(reply)


# --------------------------------------------------------------------------- consolidation


class ConsolidateBody(Strict):
    # Dry run by default (the seed consolidated at once, and its sources were later purged).
    dry_run: bool = True
    min_similarity: float = Field(default=0.75, ge=0.5, le=1.0)
    min_cluster_size: int = Field(default=3, ge=2, le=100)
    max_clusters: int = Field(default=0, ge=0, le=10_000, description="0: every cluster")
    time_bucket: Literal["week", "month"] | None = None
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


class ReportOut(BaseModel):
    """A job's report (fields per job, see docs/maintenance.md) with the run that made it."""

    model_config = ConfigDict(extra="allow")
    run_id: int
    dry_run: bool


def _report(run: maintenance_pb2.JobRun, response: Response) -> dict[str, Any]:
    report = _finished(run, response)
    if report is None:
        return _run(run)
    if run.status == "failed":
        return {"run_id": run.id, "dry_run": run.dry_run, "error": run.error}
    return {**report, "run_id": run.id, "dry_run": run.dry_run}


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
    run = await _start(
        backends,
        "consolidation",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


class AutoConsolidateBody(Strict):
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post("/auto-consolidate", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def auto_consolidate(
    body: AutoConsolidateBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Consolidation at the stricter automatic threshold (0.85), at most 5 clusters."""
    run = await _start(
        backends,
        "auto-consolidation",
        dry_run=False,
        params={},
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    out = _report(run, response)
    if run.status == "succeeded":
        done = out.get("consolidated") or []
        out |= {
            "clustersFound": out.get("clusters_found", 0),
            "clustersConsolidated": len(done),
            "memoriesMerged": sum(len(d["members"]) for d in done),
            "summaryIds": [d["summary_id"] for d in done],
        }
    return out


class Consolidation(BaseModel):
    id: str
    namespace: str | None
    summary_id: str | None
    source_ids: list[str]
    strategy: str
    memories_merged: int
    created_at: str


@router.get("/consolidations", response_model=list[Consolidation])
async def consolidations(
    backends: BackendsDep,
    namespace: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 20,
) -> Any:
    """Consolidation history, newest first."""
    reply: maintenance_pb2.JsonReply = await _stub(backends).ListConsolidations(
        maintenance_pb2.ListRecordsRequest(namespace=namespace or "", limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


# -------------------------------------------------------------------------- contradictions


class Contradiction(BaseModel):
    id: str
    namespace: str
    memory_a_id: str
    memory_b_id: str
    memory_a_preview: str
    memory_b_preview: str
    memory_a_active: bool
    memory_b_active: bool
    description: str
    kind: str | None
    score: float | None
    status: Literal["pending", "resolved", "dismissed"]
    resolution: str | None
    created_at: str
    updated_at: str


class DetectBody(Strict):
    dry_run: bool = False
    min_similarity: float | None = Field(default=None, ge=0.3, le=1.0)
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post(
    "/contradictions/detect", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES
)
async def detect_contradictions(
    body: DetectBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Batch detection over the namespace(s); new pairs are recorded as pending."""
    params = {"min_similarity": body.min_similarity} if body.min_similarity is not None else {}
    run = await _start(
        backends,
        "contradictions",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


@router.get("/contradictions", response_model=list[Contradiction])
async def list_contradictions(
    backends: BackendsDep,
    contradiction_status: Annotated[
        str,
        Query(
            alias="status",
            max_length=32,
            description="pending (default), resolved, dismissed or all; anything else is a 400",
        ),
    ] = "pending",
    namespace: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> Any:
    reply: maintenance_pb2.JsonReply = await _stub(backends).ListContradictions(
        maintenance_pb2.ListRecordsRequest(
            namespace=namespace or "", limit=limit, status=contradiction_status
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


ContradictionId = Annotated[str, Path(min_length=1, max_length=64)]


@router.get("/contradictions/{contradiction_id}", response_model=Contradiction)
async def get_contradiction(
    contradiction_id: ContradictionId,
    backends: BackendsDep,
    namespace: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
) -> Any:
    """One contradiction (any age; the seed looked only at the newest 50)."""
    reply: maintenance_pb2.JsonReply = await _stub(backends).GetContradiction(
        maintenance_pb2.RecordRef(id=contradiction_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


class ContradictionPatch(Strict):
    status: Literal["pending", "resolved", "dismissed"] = "resolved"
    resolution: str | None = Field(default=None, max_length=2000)
    keep_id: str | None = Field(
        default=None,
        max_length=64,
        description="With status resolved: the memory that stays; the other is superseded",
    )
    namespace: Namespace = None


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
    reply: maintenance_pb2.JsonReply = await _stub(backends).UpdateContradiction(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return json.loads(reply.json)


# ----------------------------------------------------------------------- regression runs


@router.get("/retrieval-regression/runs")
async def regression_runs(
    backends: BackendsDep, limit: Annotated[int, Query(ge=1, le=100)] = 10
) -> dict[str, Any]:
    """`{runs: [{run_id, query_count, alerts, avg_overlap, created_at}]}`, newest first."""
    reply: maintenance_pb2.JsonReply = await _stub(backends).ListRegressionRuns(
        maintenance_pb2.ListRecordsRequest(limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    result: dict[str, Any] = json.loads(reply.json)
    return result


@router.get("/retrieval-regression/latest")
async def regression_latest(backends: BackendsDep) -> dict[str, Any]:
    """`{run_id, golden_count, results: [{query, overlap_at_10, avg_rank_shift, exact_order,
    alert, created_at}]}` of the latest run."""
    reply: maintenance_pb2.JsonReply = await _stub(backends).GetLatestRegressionRun(
        maintenance_pb2.ListRecordsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    result: dict[str, Any] = json.loads(reply.json)
    return result


# -------------------------------------------------------------------- importance, archival


class ImportanceBody(Strict):
    dry_run: bool = False
    boost_threshold: int | None = Field(default=None, ge=1, le=1_000_000)
    decay_age_days: int | None = Field(default=None, ge=1, le=36_500)
    graph_boost: bool = True
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post("/importance-adjust", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def importance_adjust(
    body: ImportanceBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Boost used memories, decay unused ones, boost memories of central entities (once).
    Pinned memories are untouched; a second run in a row changes nothing.
    `{boosted, decayed, graph_boosted, dry_run, details[{id, action, old_importance,
    new_importance}]}`."""
    params = body.model_dump(exclude={"dry_run", "namespace", "wait_seconds"}, exclude_none=True)
    run = await _start(
        backends,
        "importance",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


class ArchiveBody(Strict):
    dry_run: bool = False
    stale_days: int = Field(default=90, ge=1, le=36_500)
    max_importance: float = Field(default=0.3, ge=0.0, le=1.0)
    max_access_count: int = Field(default=2, ge=0, le=1_000_000)
    abandoned_days: int = Field(default=365, ge=1, le=36_500)
    include_expired: bool = True
    namespace: Namespace = None
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post("/archive", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def archive(body: ArchiveBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Archive stale, abandoned and expired memories (never deleted: restorable from the
    trash). `{archived, total, by_reason, candidates[{id, content, importance, access_count,
    created_at, last_accessed_at, reason}], dry_run}`."""
    params = body.model_dump(exclude={"dry_run", "namespace", "wait_seconds"})
    run = await _start(
        backends,
        "archival",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


@router.get("/archive/preview", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def archive_preview(
    backends: BackendsDep,
    response: Response,
    namespace: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
) -> dict[str, Any]:
    """The decay preview: what archival would archive now, and why (a dry run; changes
    nothing, so a read-only key may ask)."""
    run = await _start(
        backends,
        "archival",
        dry_run=True,
        params={},
        namespace=namespace,
        wait_seconds=DEFAULT_WAIT_SECONDS,
    )
    return _report(run, response)


# ------------------------------------------------------------------ repair, tags, health


class ReembedBody(Strict):
    dry_run: bool = False
    stale_model: bool = Field(
        default=True, description="Also rows embedded by another model than the running one"
    )
    limit: int = Field(default=10_000, ge=1, le=1_000_000)
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post("/reembed", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def reembed(body: ReembedBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Embed active rows with no vector (not chunked parents nor benchmark items) and, by
    default, rows embedded by another model. `{processed, failed, to_embed, model}`. Spans
    every namespace: needs a key for all."""
    run = await _start(
        backends,
        "repair",
        dry_run=body.dry_run,
        params={
            "reembed": True,
            "stale_model": body.stale_model,
            "limit": body.limit,
            "prune_outbox_days": 0,
        },
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


class TagMergeBody(Strict):
    dry_run: bool = False
    from_tag: str | None = Field(default=None, min_length=1, max_length=100)
    to_tag: str | None = Field(default=None, min_length=1, max_length=100)
    auto_merge: int = Field(
        default=0, ge=0, le=100, description="Merge up to this many near-certain pairs"
    )
    min_similarity: float = Field(default=0.8, ge=0.5, le=0.99)
    limit: int = Field(default=20, ge=1, le=500)
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post(
    "/maintenance/tags/merge", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES
)
async def merge_tags(
    body: TagMergeBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Near-duplicate tag suggestions, and a merge: the given pair, or up to `auto_merge`
    near-certain ones. A merge renames the tag everywhere and records it in `tags.alias_map`."""
    params = body.model_dump(exclude={"dry_run", "wait_seconds"}, exclude_none=True)
    run = await _start(
        backends,
        "tags",
        dry_run=body.dry_run,
        params=params,
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)


class HealthCheck(BaseModel):
    name: str
    status: Literal["ok", "warn", "critical"]
    value: float | None
    detail: str
    suggestion: str


class Health(BaseModel):
    overall: Literal["ok", "warn", "critical"]
    checks: list[HealthCheck]


@router.get("/maintenance/health", response_model=Health)
async def health_checks(
    backends: BackendsDep,
    namespace: Annotated[str | None, Query(min_length=1, max_length=128)] = None,
) -> Any:
    """The eight health checks (embedding gap, tag sparsity, entity orphans, retrieval desert,
    importance collapse, consolidation backlog, growth stall, stale access), each ok, warn or
    critical with a suggestion; `overall` is the worst."""
    reply: maintenance_pb2.JsonReply = await _stub(backends).Health(
        maintenance_pb2.ListRecordsRequest(namespace=namespace or ""),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return json.loads(reply.json)


class ReindexBody(Strict):
    wait_seconds: Wait = DEFAULT_WAIT_SECONDS


@router.post("/maintenance/reindex", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def reindex(body: ReindexBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Compare the vector and keyword indexes with Postgres and repair what differs
    (`{expected, repaired: {"<index>/<reason>": n}, seconds}`). Needs a key for all namespaces."""
    run = await _start(
        backends,
        "reindex",
        dry_run=False,
        params={},
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return _report(run, response)
