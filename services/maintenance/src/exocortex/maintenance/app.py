"""The maintenance service: Postgres, NATS, the Maintenance gRPC API, health, metrics, the
search recorder (access counts, impressions, misses, co-retrievals from `search.performed`),
the jobs and their scheduler."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.bus import settings_changes, subjects
from exocortex.core.bus.client import DurableConsumer
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import RetrievalClient
from exocortex.core.logging import get_logger
from exocortex.core.rpc.client import open_channel
from exocortex.core.settings_cache import SettingsCache
from exocortex.core.worker import open_worker
from exocortex.maintenance import metrics
from exocortex.maintenance.analytics import wiring as analytics
from exocortex.maintenance.analytics.servicer import AnalyticsServicer
from exocortex.maintenance.backup import wiring as backup
from exocortex.maintenance.backup.servicer import BackupServicer
from exocortex.maintenance.clients import IngestWriter, RetrievalAdmin
from exocortex.maintenance.deps import Deps
from exocortex.maintenance.jobs.registry import all_jobs
from exocortex.maintenance.jobs.runner import JobRunner
from exocortex.maintenance.recorder import SearchRecorder
from exocortex.maintenance.scheduler.scheduler import LiveSchedules, Scheduler
from exocortex.maintenance.service import MaintenanceService
from exocortex.maintenance.servicer import MaintenanceServicer
from exocortex.maintenance.settings import MaintenanceSettings
from exocortex.proto.v1 import maintenance_pb2_grpc

log = get_logger(__name__)


# Jobs whose schedule is a runtime setting, unless EXO_MAINTENANCE_SCHEDULES names them.
SETTING_SCHEDULES = {"retrieval-regression": "retrieval_regression.schedule"}


def schedules_for(settings: MaintenanceSettings) -> dict[str, str]:
    """Each job's default schedule, overridden by EXO_MAINTENANCE_SCHEDULES."""
    jobs = all_jobs()
    unknown = set(settings.schedules) - set(jobs)
    if unknown:
        raise ValueError(f"EXO_MAINTENANCE_SCHEDULES names unknown jobs: {sorted(unknown)}")
    return {name: settings.schedules.get(name, job.schedule) for name, job in jobs.items()}


async def run(settings: MaintenanceSettings, stop: asyncio.Event) -> None:
    schedules = schedules_for(settings)
    async with AsyncExitStack() as stack:
        servicer = MaintenanceServicer()
        analytics_servicer = AnalyticsServicer()
        backup_servicer = BackupServicer()
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
                backup.registration(backup_servicer),
            ],
        )
        analytics.attach(stack, analytics_servicer, worker.pool, settings)
        backup.attach(stack, backup_servicer, worker.pool, settings, stop)
        channels = {
            name: open_channel(addr)
            for name, addr in (
                ("retrieval", settings.retrieval_addr),
                ("embedding", settings.embedding_addr),
                ("ingest", settings.ingest_addr),
            )
        }
        for channel in channels.values():
            stack.push_async_callback(channel.close)
        settings_cache = SettingsCache(worker.pool)
        await settings_changes.follow(worker.nats, settings_cache, "maintenance")
        deps = Deps(
            pool=worker.pool,
            retrieval=RetrievalClient(channels["retrieval"], timeout=30.0),
            retrieval_admin=RetrievalAdmin(channels["retrieval"]),
            embedding=EmbeddingClient(channels["embedding"], timeout=120.0),
            ingest=IngestWriter(channels["ingest"]),
            settings=settings_cache,
        )
        runner = JobRunner(deps, settings.database_url, all_jobs())
        stack.push_async_callback(runner.close)
        live = LiveSchedules(
            {name: expr for name, expr in schedules.items() if name not in SETTING_SCHEDULES}
            | {
                name: settings.schedules[name]
                for name in SETTING_SCHEDULES.keys() & settings.schedules
            },
            {job: key for job, key in SETTING_SCHEDULES.items() if job not in settings.schedules},
            settings_cache.get,
        )
        servicer.attach(MaintenanceService(deps, runner, live), worker.pool)
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
        tasks = [asyncio.create_task(recorder.run(stop), name="search-recorder")]
        if settings.scheduler_enabled:
            scheduler = Scheduler(
                runner,
                live,
                startup_jobs=[j for j in settings.startup_jobs if j in runner.jobs],
                startup_delay_seconds=settings.startup_delay_seconds,
                previews=settings.scheduled_previews,
                refresh_seconds=settings.schedule_refresh_seconds,
            )
            tasks.append(asyncio.create_task(scheduler.run(stop), name="job-scheduler"))
        # Exported from the start so dashboards and alerts see the series before the first run.
        for name in runner.jobs:
            for status in ("succeeded", "failed"):
                metrics.JOB_RUNS.labels(name, status)
        log.info(
            "maintenance ready", jobs=sorted(runner.jobs), scheduler=settings.scheduler_enabled
        )
        await stop.wait()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
