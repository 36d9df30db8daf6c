"""The maintenance service: Postgres, NATS, the Maintenance gRPC API, health, metrics, and the
search recorder (access counts, impressions, misses, co-retrievals from `search.performed`).

Scheduled jobs (importance, archival, consolidation, ...) arrive with the maintenance work;
ListJobs reports exactly the jobs that exist.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer
from exocortex.core.logging import get_logger
from exocortex.core.worker import open_worker
from exocortex.maintenance import metrics
from exocortex.maintenance.analytics import wiring as analytics
from exocortex.maintenance.analytics.servicer import AnalyticsServicer
from exocortex.maintenance.recorder import SearchRecorder
from exocortex.maintenance.servicer import MaintenanceServicer
from exocortex.maintenance.settings import MaintenanceSettings
from exocortex.proto.v1 import maintenance_pb2_grpc

log = get_logger(__name__)


async def run(settings: MaintenanceSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        servicer = MaintenanceServicer()
        analytics_servicer = AnalyticsServicer()
        worker = await open_worker(
            stack,
            "maintenance",
            settings,
            [
                (
                    maintenance_pb2_grpc.add_MaintenanceServicer_to_server,
                    servicer,
                    "exocortex.v1.Maintenance",
                ),
                analytics.registration(analytics_servicer),
            ],
        )
        analytics.attach(stack, analytics_servicer, worker.pool, settings)
        servicer.attach(worker.pool)
        recorder = DurableConsumer(
            worker.nats.jetstream(),
            durable=subjects.MAINTENANCE_SEARCH_RECORDER,
            filter_subject=subjects.SEARCH_PERFORMED,
            handler=SearchRecorder(worker.pool).handle,
            batch_size=256,
            fetch_timeout=0.5,
            # Side effects may lag a little; a steady stream of searches is then recorded
            # many at a time in one statement per kind (see recorder and settings).
            linger=settings.recorder_linger_seconds,
        )
        # Exported from the start so dashboards and alerts see the series before the first run.
        log.info("maintenance ready", job_metrics=metrics.JOB_RUNS._name)
        task = asyncio.create_task(recorder.run(stop), name="search-recorder")
        await stop.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
