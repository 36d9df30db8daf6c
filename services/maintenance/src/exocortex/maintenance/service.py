"""The maintenance service's logic behind its gRPC API, on domain values: the job catalogue
with schedules and last runs, starting and polling runs, and the curation records (consolidation
history, contradictions, regression runs)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from exocortex.core import scope
from exocortex.core.errors import InvalidArgument, PermissionDenied
from exocortex.maintenance.deps import Deps
from exocortex.maintenance.health.checks import run_checks
from exocortex.maintenance.jobs import repository
from exocortex.maintenance.jobs.base import Scope
from exocortex.maintenance.jobs.consolidation import repository as consolidations
from exocortex.maintenance.jobs.contradictions.service import Contradictions
from exocortex.maintenance.jobs.regression.service import RegressionRecords
from exocortex.maintenance.jobs.repository import JobRunRecord
from exocortex.maintenance.jobs.runner import JobRunner
from exocortex.maintenance.scheduler.scheduler import LiveSchedules, next_fire

MAX_WAIT_SECONDS = 300.0
MAX_LIST = 500


@dataclass(frozen=True, slots=True)
class JobInfo:
    name: str
    description: str
    scope: Scope
    schedule: str
    last_run_at: datetime | None
    last_status: str
    next_run_at: datetime | None


class MaintenanceService:
    def __init__(self, deps: Deps, runner: JobRunner, schedules: LiveSchedules) -> None:
        self.deps = deps
        self.runner = runner
        self.schedules = schedules
        self.contradictions = Contradictions(deps)
        self.regression = RegressionRecords(deps)

    async def list_jobs(self) -> list[JobInfo]:
        async with self.deps.pool.connection() as conn:
            last = await repository.last_runs(conn)
        now = datetime.now(UTC)
        schedules = await self.schedules.current()
        out = []
        for name, job in sorted(self.runner.jobs.items()):
            expr = schedules.get(name, "")
            run = last.get(name)
            out.append(
                JobInfo(
                    name=name,
                    description=job.description,
                    scope=job.scope,
                    schedule=expr,
                    last_run_at=run.started_at if run else None,
                    last_status=run.status if run else "",
                    next_run_at=next_fire(expr, now) if expr else None,
                )
            )
        return out

    async def run_job(
        self, name: str, *, params_json: str, dry_run: bool, namespace: str, wait_seconds: float
    ) -> JobRunRecord:
        if not 0 <= wait_seconds <= MAX_WAIT_SECONDS:
            raise InvalidArgument(
                f"wait_seconds must be between 0 and {MAX_WAIT_SECONDS:g}", field="wait_seconds"
            )
        record = await self.runner.start(
            name, params_json=params_json, dry_run=dry_run, namespace=namespace
        )
        assert record is not None  # only scheduled fires may be skipped
        return await self.runner.wait(record.id, wait_seconds)

    async def get_run(self, run_id: int) -> JobRunRecord:
        return await self.runner.get(run_id)

    async def list_runs(self, job: str, limit: int) -> list[JobRunRecord]:
        return await self.runner.list_runs(job or None, _limit(limit, 20))

    async def list_consolidations(self, namespace: str, limit: int) -> list[dict[str, Any]]:
        async with self.deps.pool.connection() as conn:
            rows = await consolidations.history(conn, _namespaces(namespace), _limit(limit, 20))
        return [
            {
                "id": r.id,
                "namespace": r.namespace,
                "summary_id": r.summary_id,
                "source_ids": r.source_ids,
                "strategy": r.strategy,
                "memories_merged": r.memories_merged,
                "created_at": r.created_at.isoformat(),
            }
            for r in rows
        ]

    async def list_contradictions(
        self, namespace: str, status: str, limit: int
    ) -> list[dict[str, Any]]:
        return await self.contradictions.list(namespace, status, _limit(limit, 50))

    async def health(self, namespace: str) -> dict[str, Any]:
        async with self.deps.pool.connection() as conn:
            return await run_checks(conn, _namespaces(namespace))

    async def regression_runs(self, limit: int) -> dict[str, Any]:
        _global_only()
        return await self.regression.runs(_limit(limit, 10))

    async def latest_regression_run(self) -> dict[str, Any]:
        _global_only()
        return await self.regression.latest()


def _global_only() -> None:
    if scope.current_scope() is not None:
        raise PermissionDenied(
            "retrieval regression spans every namespace; it needs a key for all namespaces",
            field="namespace",
        )


def _namespaces(namespace: str) -> list[str] | None:
    """One named namespace (checked against the caller's scope), else the caller's scope."""
    if namespace:
        return [scope.require(namespace)]
    return scope.scoped_list()


def _limit(limit: int, default: int) -> int:
    if limit == 0:
        return default
    if not 1 <= limit <= MAX_LIST:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIST}", field="limit")
    return limit
