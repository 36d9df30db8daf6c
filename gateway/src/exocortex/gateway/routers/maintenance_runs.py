"""How the maintenance routes start a job and answer with its run or report (no routes here).

A job run is waited for up to `wait_seconds`; one still going then is answered **202** with the
run (`id`, `progress`), to poll at `GET /api/maintenance/jobs/runs/{run_id}`.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated, Any

from fastapi import Query, Response, status
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.api.limits import NAMESPACE_MAX
from exocortex.api.maintenance import JobRunOut
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc

NamespaceQuery = Annotated[str | None, Query(min_length=1, max_length=NAMESPACE_MAX)]

RUN_RESPONSES: dict[int | str, dict[str, Any]] = {
    202: {"model": JobRunOut, "description": "Still running: poll `poll`"},
}


def stamp(value: Timestamp) -> str:
    return value.ToDatetime(tzinfo=UTC).isoformat()


def maintenance_stub(backends: Any) -> maintenance_pb2_grpc.MaintenanceStub:
    return maintenance_pb2_grpc.MaintenanceStub(backends.channels["maintenance"])


def run_body(run: maintenance_pb2.JobRun) -> dict[str, Any]:
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


async def start_job(
    backends: Any,
    name: str,
    *,
    dry_run: bool,
    params: dict[str, Any],
    namespace: str | None,
    wait_seconds: float,
) -> maintenance_pb2.JobRun:
    reply: maintenance_pb2.JobRun = await maintenance_stub(backends).RunJob(
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


def finished_report(run: maintenance_pb2.JobRun, response: Response) -> dict[str, Any] | None:
    """The report of a finished run; None (and 202) while it runs. A failed run is a 200
    with status failed and the error, like any finished run."""
    if run.status == "running":
        response.status_code = status.HTTP_202_ACCEPTED
        response.headers["Location"] = f"/api/maintenance/jobs/runs/{run.id}"
        return None
    return json.loads(run.report_json) if run.report_json else None


def report_or_run(run: maintenance_pb2.JobRun, response: Response) -> dict[str, Any]:
    """A job route's answer: the report with its run id, the error of a failed run, or the
    run itself (202) while it goes on."""
    report = finished_report(run, response)
    if report is None:
        return run_body(run)
    if run.status == "failed":
        return {"run_id": run.id, "dry_run": run.dry_run, "error": run.error}
    return {**report, "run_id": run.id, "dry_run": run.dry_run}
