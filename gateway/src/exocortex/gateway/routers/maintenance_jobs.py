"""Maintenance jobs over REST (served by the maintenance service): the job list, starting any
job by name, and its runs with their progress.

Every write needs a read-write key; a job that spans every namespace needs a key for all
namespaces.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from exocortex.api.limits import JOB_NAME_MAX, JOB_NAME_PATTERN, MAINTENANCE_LIST_MAX, RUN_ID_MAX
from exocortex.api.maintenance import JobList, JobRunList, JobRunOut, RunJobBody
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.maintenance_runs import (
    RUN_RESPONSES,
    finished_report,
    maintenance_stub,
    run_body,
    stamp,
    start_job,
)
from exocortex.proto.v1 import maintenance_pb2

router = APIRouter(prefix="/api", tags=["maintenance"])

JobName = Annotated[str, Path(min_length=1, max_length=JOB_NAME_MAX, pattern=JOB_NAME_PATTERN)]


@router.get("/maintenance/jobs", response_model=JobList)
async def list_jobs(backends: BackendsDep) -> dict[str, Any]:
    """Every job with its schedule, last run and next scheduled run."""
    reply: maintenance_pb2.ListJobsResponse = await maintenance_stub(backends).ListJobs(
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
    run = await start_job(
        backends,
        name,
        dry_run=body.dry_run,
        params=body.params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    finished_report(run, response)
    return run_body(run)


@router.get("/maintenance/jobs/runs", response_model=JobRunList)
async def list_runs(
    backends: BackendsDep,
    job: Annotated[str | None, Query(max_length=JOB_NAME_MAX)] = None,
    limit: Annotated[int, Query(ge=1, le=MAINTENANCE_LIST_MAX)] = 20,
) -> dict[str, Any]:
    """The latest runs, newest first (of one job when `job` is given)."""
    reply: maintenance_pb2.ListJobRunsResponse = await maintenance_stub(backends).ListJobRuns(
        maintenance_pb2.ListJobRunsRequest(job=job or "", limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    runs = [run_body(r) for r in reply.runs]
    return {"runs": runs, "count": len(runs)}


@router.get("/maintenance/jobs/runs/{run_id}", response_model=JobRunOut)
async def get_run(
    run_id: Annotated[int, Path(ge=1, le=RUN_ID_MAX)], backends: BackendsDep
) -> dict[str, Any]:
    """One run: its status, progress while it goes on, and its report once finished."""
    reply: maintenance_pb2.JobRun = await maintenance_stub(backends).GetJobRun(
        maintenance_pb2.GetJobRunRequest(id=run_id), timeout=backends.settings.rpc_timeout_seconds
    )
    return run_body(reply)
