"""The maintenance service's frame: Postgres, NATS, the Maintenance gRPC API, health, metrics.

Scheduled jobs (importance, archival, consolidation, ...) and the search-side recorder arrive
with the maintenance work; ListJobs reports exactly the jobs that exist.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.logging import get_logger
from exocortex.core.worker import open_worker
from exocortex.maintenance import metrics
from exocortex.maintenance.servicer import MaintenanceServicer
from exocortex.maintenance.settings import MaintenanceSettings
from exocortex.proto.v1 import maintenance_pb2_grpc

log = get_logger(__name__)


async def run(settings: MaintenanceSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        await open_worker(
            stack,
            "maintenance",
            settings,
            [
                (
                    maintenance_pb2_grpc.add_MaintenanceServicer_to_server,
                    MaintenanceServicer(),
                    "exocortex.v1.Maintenance",
                )
            ],
        )
        # Exported from the start so dashboards and alerts see the series before the first run.
        log.info("maintenance ready", job_metrics=metrics.JOB_RUNS._name)
        await stop.wait()
