"""gRPC ↔ service conversion only."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import grpc
import psycopg
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg_pool import AsyncConnectionPool

from exocortex.core.errors import InvalidArgument
from exocortex.maintenance.jobs.repository import JobRunRecord
from exocortex.maintenance.recorder import record_feedback
from exocortex.maintenance.service import JobInfo, MaintenanceService
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc

MAX_FEEDBACK_IDS = 100


def _stamp(at: datetime | None) -> Timestamp | None:
    if at is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return stamp


def job_proto(info: JobInfo) -> maintenance_pb2.Job:
    return maintenance_pb2.Job(
        name=info.name,
        description=info.description,
        schedule=info.schedule,
        scope=info.scope,
        last_status=info.last_status,
        last_run_at=_stamp(info.last_run_at),
        next_run_at=_stamp(info.next_run_at),
    )


def run_proto(run: JobRunRecord) -> maintenance_pb2.JobRun:
    return maintenance_pb2.JobRun(
        id=run.id,
        job=run.job,
        status=run.status,
        dry_run=run.dry_run,
        params_json=json.dumps(run.params),
        report_json=json.dumps(run.report) if run.report is not None else "",
        progress_json=json.dumps(run.progress),
        error=run.error or "",
        started_at=_stamp(run.started_at),
        finished_at=_stamp(run.finished_at),
        namespace=run.namespace or "",
        trigger=run.trigger,
    )


def _json(value: Any) -> maintenance_pb2.JsonReply:
    return maintenance_pb2.JsonReply(json=json.dumps(value))


class MaintenanceServicer(maintenance_pb2_grpc.MaintenanceServicer):
    def __init__(self) -> None:
        self._service: MaintenanceService | None = None
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]] | None = None

    def attach(
        self,
        service: MaintenanceService,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]],
    ) -> None:
        self._service = service
        self._pool = pool

    @property
    def service(self) -> MaintenanceService:
        assert self._service is not None, "servicer used before start-up finished"
        return self._service

    async def ListJobs(
        self, request: maintenance_pb2.ListJobsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.ListJobsResponse:
        jobs = await self.service.list_jobs()
        return maintenance_pb2.ListJobsResponse(jobs=[job_proto(j) for j in jobs])

    async def RunJob(
        self, request: maintenance_pb2.RunJobRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JobRun:
        run = await self.service.run_job(
            request.name,
            params_json=request.params_json,
            dry_run=request.dry_run,
            namespace=request.namespace,
            wait_seconds=request.wait_seconds,
        )
        return run_proto(run)

    async def GetJobRun(
        self, request: maintenance_pb2.GetJobRunRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JobRun:
        return run_proto(await self.service.get_run(request.id))

    async def ListJobRuns(
        self, request: maintenance_pb2.ListJobRunsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.ListJobRunsResponse:
        runs = await self.service.list_runs(request.job, request.limit)
        return maintenance_pb2.ListJobRunsResponse(runs=[run_proto(r) for r in runs])

    async def RecordFeedback(
        self, request: maintenance_pb2.RecordFeedbackRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.RecordFeedbackResponse:
        if not request.ids:
            raise InvalidArgument("ids must not be empty", field="ids")
        if len(request.ids) > MAX_FEEDBACK_IDS:
            raise InvalidArgument(f"at most {MAX_FEEDBACK_IDS} ids per call", field="ids")
        assert self._pool is not None, "servicer used before start-up finished"
        recorded, missing = await record_feedback(self._pool, list(request.ids))
        return maintenance_pb2.RecordFeedbackResponse(recorded_ids=recorded, missing_ids=missing)

    async def ListConsolidations(
        self, request: maintenance_pb2.ListRecordsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(await self.service.list_consolidations(request.namespace, request.limit))

    async def ListContradictions(
        self, request: maintenance_pb2.ListRecordsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(
            await self.service.list_contradictions(request.namespace, request.status, request.limit)
        )

    async def GetContradiction(
        self, request: maintenance_pb2.RecordRef, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(await self.service.contradictions.get(request.id))

    async def UpdateContradiction(
        self, request: maintenance_pb2.UpdateContradictionRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(
            await self.service.contradictions.update(
                request.id,
                request.status,
                request.resolution if request.HasField("resolution") else None,
                request.keep_id if request.HasField("keep_id") else None,
            )
        )

    async def ListRegressionRuns(
        self, request: maintenance_pb2.ListRecordsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(await self.service.regression_runs(request.limit))

    async def GetLatestRegressionRun(
        self, request: maintenance_pb2.ListRecordsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(await self.service.latest_regression_run())

    async def Health(
        self, request: maintenance_pb2.ListRecordsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.JsonReply:
        return _json(await self.service.health(request.namespace))
