"""Runs jobs: checks their parameters, takes the job's Postgres advisory lock (so two
maintenance processes never run the same job at once), records a `job_runs` row with progress
and the final report, and exports the run's outcome and duration as metrics.

A run goes on in the background; a caller waits for it as long as it likes and then polls its
row. The lock lives on a connection of its own, held for the run: if the process dies, the
connection ends and Postgres frees the lock, and the next run marks the dead run failed.

A dry run (a preview) changes nothing, and a read-only key may ask for one (the decay
preview), so it never takes the job's lock: a preview, or a loop of them, can neither make a
real run fail with 409 nor delay it. A dry run holds a *shared* lock on another name instead,
only so that an abandoned preview can be told from a live one. Identical previews asked of one
process while one runs share that run rather than each starting another.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from exocortex.core import scope
from exocortex.core.errors import Conflict, InvalidArgument, NotFound, PermissionDenied
from exocortex.core.logging import get_logger
from exocortex.maintenance import metrics
from exocortex.maintenance.deps import Deps
from exocortex.maintenance.jobs import repository
from exocortex.maintenance.jobs.base import Job, JobContext
from exocortex.maintenance.jobs.repository import JobRunRecord

log = get_logger(__name__)

# Progress is written at most this often (a batch loop may report far more often).
PROGRESS_INTERVAL_SECONDS = 1.0


class JobRunner:
    def __init__(self, deps: Deps, database_url: str, jobs: Mapping[str, Job]) -> None:
        self._deps = deps
        self._database_url = database_url
        self.jobs = dict(jobs)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        # Running dry runs of this process by (job, namespace, params): a preview asked again
        # while one runs joins it, so a caller looping on a preview adds no work.
        self._previews: dict[tuple[str, str, str], int] = {}

    def job(self, name: str) -> Job:
        job = self.jobs.get(name)
        if job is None:
            known = ", ".join(sorted(self.jobs))
            raise NotFound(f"no maintenance job named {name!r} (known: {known})", field="name")
        return job

    def parse_params(self, job: Job, params_json: str) -> Any:
        try:
            raw = json.loads(params_json) if params_json.strip() else {}
        except ValueError as exc:
            raise InvalidArgument(f"params is not valid JSON: {exc}", field="params") from exc
        if not isinstance(raw, dict):
            raise InvalidArgument("params must be a JSON object", field="params")
        try:
            return job.params_model.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "params"
            raise InvalidArgument(
                f"{job.name} params: {where}: {first['msg']}", field=f"params.{where}"
            ) from exc

    async def namespaces_for(self, job: Job, namespace: str) -> list[str]:
        """What a run works over. Global jobs need a caller who may see every namespace."""
        if job.scope == "global":
            if scope.current_scope() is not None:
                raise PermissionDenied(
                    f"{job.name} spans every namespace; it needs a key for all namespaces",
                    field="namespace",
                )
            return []
        if namespace:
            return [scope.require(namespace)]
        async with self._deps.pool.connection() as conn:
            return await repository.active_namespaces(conn, scope.scoped_list())

    async def start(
        self,
        name: str,
        *,
        params_json: str = "",
        dry_run: bool = False,
        namespace: str = "",
        trigger: str = "api",
        once_since: datetime | None = None,
    ) -> JobRunRecord | None:
        """Start a run in the background; raises Conflict when the job runs already (here or
        in another maintenance process). With ``once_since`` (a scheduled fire time) it starts
        nothing and returns None when a run already started at or after that time, so replicas
        firing the same schedule run it once."""
        job = self.job(name)
        params = self.parse_params(job, params_json)
        namespaces = await self.namespaces_for(job, namespace)
        # The same work: the same job over the same namespaces with the same parameters.
        preview_key = (
            job.name,
            json.dumps(namespaces),
            json.dumps(params.model_dump(mode="json"), sort_keys=True),
        )
        if dry_run and once_since is None:
            joined = self._previews.get(preview_key)
            if joined is not None and joined in self._tasks:
                return await self.get(joined)
        lock_conn = await repository.open_lock_connection(self._database_url)
        try:
            if dry_run:
                await self._lock_preview(lock_conn, job.name)
            elif not await repository.try_lock(lock_conn, job.name):
                async with self._deps.pool.connection() as conn:
                    running = await repository.running_run(conn, job.name)
                which = f" (run {running.id})" if running is not None else ""
                raise Conflict(f"{job.name} is already running{which}; poll it", field="name")
            record: JobRunRecord | None = None
            async with self._deps.pool.connection() as conn:
                if not dry_run:
                    await repository.fail_abandoned(conn, [job.name])
                async with conn.transaction():
                    if once_since is not None:
                        await repository.lock_fire(conn, job.name)
                    if once_since is None or not await repository.started_since(
                        conn, job.name, once_since, dry_run=dry_run, trigger=trigger
                    ):
                        record = await repository.start_run(
                            conn,
                            job.name,
                            dry_run=dry_run,
                            params=params.model_dump(mode="json"),
                            namespace=namespace or None,
                            trigger=trigger,
                        )
            if record is None:
                await self._unlock(lock_conn, job.name, dry_run=dry_run)
                await lock_conn.close()
                return None
        except BaseException:
            await lock_conn.close()
            raise
        task = asyncio.create_task(
            self._execute(job, record, params, namespaces, lock_conn), name=f"job-{job.name}"
        )
        self._tasks[record.id] = task
        if dry_run:
            self._previews[preview_key] = record.id

        def forget(_task: asyncio.Task[None]) -> None:
            self._tasks.pop(record.id, None)
            if self._previews.get(preview_key) == record.id:
                del self._previews[preview_key]

        task.add_done_callback(forget)
        return record

    async def _lock_preview(self, lock_conn: repository.LockConn, job: str) -> None:
        """Takes the job's shared preview lock; first, when no preview of the job is alive
        anywhere, marks the dry runs still 'running' failed (their process died)."""
        if await repository.try_lock_previews(lock_conn, job):
            try:
                async with self._deps.pool.connection() as conn:
                    await repository.fail_abandoned(conn, [job], dry_run=True)
            finally:
                await repository.unlock_previews(lock_conn, job)
        await repository.lock_preview(lock_conn, job)

    @staticmethod
    async def _unlock(lock_conn: repository.LockConn, job: str, *, dry_run: bool) -> None:
        if dry_run:
            await repository.unlock_preview(lock_conn, job)
        else:
            await repository.unlock(lock_conn, job)

    async def wait(self, run_id: int, seconds: float) -> JobRunRecord:
        task = self._tasks.get(run_id)
        if task is not None and seconds > 0:
            # shield: a caller that stops waiting must not cancel the run.
            await asyncio.wait({asyncio.ensure_future(asyncio.shield(task))}, timeout=seconds)
        return await self.get(run_id)

    async def get(self, run_id: int) -> JobRunRecord:
        async with self._deps.pool.connection() as conn:
            record = await repository.get_run(conn, run_id)
        if record is None:
            raise NotFound(f"no job run {run_id}", field="id")
        return record

    async def list_runs(self, job: str | None, limit: int) -> list[JobRunRecord]:
        if job:
            self.job(job)
        async with self._deps.pool.connection() as conn:
            return await repository.list_runs(conn, job or None, limit)

    async def _execute(
        self,
        job: Job,
        record: JobRunRecord,
        params: Any,
        namespaces: list[str],
        lock_conn: repository.LockConn,
    ) -> None:
        last_write = 0.0

        async def report_progress(progress: Mapping[str, Any]) -> None:
            nonlocal last_write
            now = time.monotonic()
            if now - last_write < PROGRESS_INTERVAL_SECONDS:
                return
            last_write = now
            async with self._deps.pool.connection() as conn:
                await repository.set_progress(conn, record.id, progress)

        # A job reads the settings as they are when it starts, not as this process last cached
        # them: a change made just before (exo retrieval-regression --set-queries, then its run)
        # may still be on its way here as an announcement. One read a run is nothing to a job.
        self._deps.settings.invalidate()
        ctx = JobContext(
            run_id=record.id,
            dry_run=record.dry_run,
            namespaces=namespaces,
            deps=self._deps,
            report_progress=report_progress,
            trigger=record.trigger,
        )
        start = time.perf_counter()
        report: dict[str, Any] | None = None
        error: str | None = None
        try:
            report = await job.run(ctx, params)
        except asyncio.CancelledError:
            error = "the maintenance process stopped before the run finished"
            raise
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.exception("maintenance job failed", job=job.name, run_id=record.id)
        finally:
            seconds = time.perf_counter() - start
            metrics.JOB_DURATION.labels(job.name).observe(seconds)
            metrics.JOB_RUNS.labels(job.name, "failed" if error else "succeeded").inc()
            if report is not None:
                report = {**report, "seconds": round(seconds, 3)}
                metrics.record_report(job.name, report)
            try:
                async with self._deps.pool.connection() as conn:
                    await repository.finish_run(conn, record.id, report=report, error=error)
            finally:
                try:
                    await self._unlock(lock_conn, job.name, dry_run=record.dry_run)
                finally:
                    await lock_conn.close()
            log.info(
                "maintenance job finished",
                job=job.name,
                run_id=record.id,
                dry_run=record.dry_run,
                ok=error is None,
                seconds=round(seconds, 3),
            )

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
