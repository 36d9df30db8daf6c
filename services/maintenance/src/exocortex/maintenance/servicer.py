"""gRPC ↔ service conversion only."""

from __future__ import annotations

import grpc

from exocortex.core.errors import NotFound
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc


class MaintenanceServicer(maintenance_pb2_grpc.MaintenanceServicer):
    """Jobs register here as they are built; the list is honest about what exists."""

    def __init__(self) -> None:
        self._jobs: dict[str, maintenance_pb2.Job] = {}

    async def ListJobs(
        self, request: maintenance_pb2.ListJobsRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.ListJobsResponse:
        return maintenance_pb2.ListJobsResponse(jobs=list(self._jobs.values()))

    async def RunJob(
        self, request: maintenance_pb2.RunJobRequest, context: grpc.aio.ServicerContext
    ) -> maintenance_pb2.RunJobResponse:
        known = ", ".join(sorted(self._jobs)) or "none yet"
        raise NotFound(f"no maintenance job named {request.name!r} (known: {known})", field="name")
