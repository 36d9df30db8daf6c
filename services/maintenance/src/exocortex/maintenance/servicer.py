"""gRPC ↔ service conversion only."""

from __future__ import annotations

from typing import Any

import grpc
import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.maintenance.recorder import record_feedback
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc

MAX_FEEDBACK_IDS = 100


class MaintenanceServicer(maintenance_pb2_grpc.MaintenanceServicer):
    """Jobs register here as they are built; the list is honest about what exists."""

    def __init__(
        self, pool: AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]] | None = None
    ) -> None:
        self._jobs: dict[str, maintenance_pb2.Job] = {}
        self._pool = pool

    def attach(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]) -> None:
        self._pool = pool

    async def ListJobs(
        self, request: maintenance_pb2.ListJobsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.ListJobsResponse:
        return maintenance_pb2.ListJobsResponse(jobs=list(self._jobs.values()))

    async def RunJob(
        self, request: maintenance_pb2.RunJobRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.RunJobResponse:
        known = ", ".join(sorted(self._jobs)) or "none yet"
        raise NotFound(f"no maintenance job named {request.name!r} (known: {known})", field="name")

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
