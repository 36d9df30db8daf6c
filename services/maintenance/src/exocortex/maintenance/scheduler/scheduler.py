"""Fires each job at the times its cron expression (UTC) names, plus a start-up pass.

Every maintenance replica runs a scheduler; the runner's advisory lock and its "once since the
fire time" check make a fire run once across replicas. A fire missed while the process was
down is not made up (the next one comes); the start-up pass covers what matters at start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from contextlib import suppress
from datetime import UTC, datetime

from croniter import croniter  # type: ignore[import-untyped]

from exocortex.core.errors import Conflict, ExoError
from exocortex.core.logging import get_logger
from exocortex.maintenance.jobs.runner import JobRunner

log = get_logger(__name__)


def check_cron(expression: str) -> str:
    """The expression when croniter accepts it; raises ValueError naming it otherwise."""
    if not croniter.is_valid(expression):
        raise ValueError(f"not a cron expression: {expression!r}")
    return expression


def next_fire(expression: str, after: datetime) -> datetime:
    fire: datetime = croniter(expression, after).get_next(datetime)
    return fire


class Scheduler:
    def __init__(
        self,
        runner: JobRunner,
        schedules: Mapping[str, str],
        *,
        startup_jobs: Sequence[str] = (),
        startup_delay_seconds: float = 5.0,
        previews: Collection[str] = (),
    ) -> None:
        unknown = (set(schedules) | set(startup_jobs) | set(previews)) - set(runner.jobs)
        if unknown:
            raise ValueError(f"schedules name unknown jobs: {sorted(unknown)}")
        self._runner = runner
        self.schedules = {name: check_cron(expr) for name, expr in schedules.items() if expr}
        self._startup_jobs = list(startup_jobs)
        self._startup_delay = startup_delay_seconds
        # Jobs run as dry runs when no one asked for them (see settings.scheduled_previews).
        self._previews = frozenset(previews)

    def next_runs(self, now: datetime | None = None) -> dict[str, datetime]:
        at = now or datetime.now(UTC)
        return {name: next_fire(expr, at) for name, expr in self.schedules.items()}

    async def run(self, stop: asyncio.Event) -> None:
        if await _sleep_until_stopped(stop, self._startup_delay):
            return
        started = datetime.now(UTC)
        for name in self._startup_jobs:
            await self._fire(name, started, trigger="startup")
        upcoming = self.next_runs()
        while upcoming:
            name, at = min(upcoming.items(), key=lambda item: item[1])
            delay = (at - datetime.now(UTC)).total_seconds()
            if await _sleep_until_stopped(stop, max(0.0, delay)):
                return
            await self._fire(name, at, trigger="schedule")
            upcoming[name] = next_fire(self.schedules[name], at)

    async def _fire(self, name: str, at: datetime, *, trigger: str) -> None:
        try:
            record = await self._runner.start(
                name, trigger=trigger, once_since=at, dry_run=name in self._previews
            )
        except Conflict:
            log.info("scheduled job skipped: it runs already", job=name)
            return
        except ExoError as exc:
            log.warning("scheduled job not started", job=name, error=exc.message)
            return
        if record is None:
            log.info("scheduled job skipped: another replica ran it", job=name)
        else:
            log.info("scheduled job started", job=name, run_id=record.id, trigger=trigger)


async def _sleep_until_stopped(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds``; True when ``stop`` was set meanwhile."""
    with suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    return stop.is_set()
