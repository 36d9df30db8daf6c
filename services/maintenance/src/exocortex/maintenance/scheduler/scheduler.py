"""Fires each job at the times its cron expression (UTC) names, plus a start-up pass. A job whose
schedule is a runtime setting follows that setting as it changes.

Every maintenance replica runs a scheduler; the runner's advisory lock and its "once since the
fire time" check make a fire run once across replicas. A fire missed while the process was
down is not made up (the next one comes); the start-up pass covers what matters at start.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
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


class LiveSchedules:
    """Each job's cron expression: fixed ones (defaults and EXO_MAINTENANCE_SCHEDULES), and
    those a runtime setting holds (`retrieval_regression.schedule`), read at each look so a
    change applies without a restart. A setting that is empty or not a cron expression turns
    its job's schedule off (logged)."""

    def __init__(
        self,
        fixed: Mapping[str, str],
        from_settings: Mapping[str, str] | None = None,
        settings: Callable[[], Awaitable[Mapping[str, str]]] | None = None,
    ) -> None:
        self.fixed = {name: check_cron(expr) for name, expr in fixed.items() if expr}
        self._from_settings = dict(from_settings or {}) if settings is not None else {}
        self._settings = settings
        self._refused: dict[str, str] = {}

    @property
    def live(self) -> bool:
        return bool(self._from_settings)

    def jobs(self) -> set[str]:
        return set(self.fixed) | set(self._from_settings)

    async def current(self) -> dict[str, str]:
        out = dict(self.fixed)
        if self._settings is None or not self._from_settings:
            return out
        values = await self._settings()
        for job, key in self._from_settings.items():
            expr = values.get(key, "").strip()
            if expr and not croniter.is_valid(expr):
                if self._refused.get(job) != expr:
                    log.warning("schedule setting is not a cron expression", job=job, key=key)
                    self._refused[job] = expr
                expr = ""
            if expr:
                out[job] = expr
            else:
                out.pop(job, None)
        return out


class Scheduler:
    def __init__(
        self,
        runner: JobRunner,
        schedules: Mapping[str, str] | LiveSchedules,
        *,
        startup_jobs: Sequence[str] = (),
        startup_delay_seconds: float = 5.0,
        previews: Collection[str] = (),
        refresh_seconds: float = 30.0,
    ) -> None:
        live = schedules if isinstance(schedules, LiveSchedules) else LiveSchedules(schedules)
        unknown = (live.jobs() | set(startup_jobs) | set(previews)) - set(runner.jobs)
        if unknown:
            raise ValueError(f"schedules name unknown jobs: {sorted(unknown)}")
        self._runner = runner
        self._live = live
        self.schedules = live.fixed
        self._startup_jobs = list(startup_jobs)
        self._startup_delay = startup_delay_seconds
        # Jobs run as dry runs when no one asked for them (see settings.scheduled_previews).
        self._previews = frozenset(previews)
        # How often schedules held in settings are read again while waiting for a fire.
        self._refresh = refresh_seconds

    def next_runs(self, now: datetime | None = None) -> dict[str, datetime]:
        at = now or datetime.now(UTC)
        return {name: next_fire(expr, at) for name, expr in self.schedules.items()}

    async def run(self, stop: asyncio.Event) -> None:
        if await _sleep_until_stopped(stop, self._startup_delay):
            return
        started = datetime.now(UTC)
        for name in self._startup_jobs:
            await self._fire(name, started, trigger="startup")
        upcoming: dict[str, tuple[str, datetime]] = {}
        while True:
            current = await self._current()
            now = datetime.now(UTC)
            for name in [n for n, (expr, _) in upcoming.items() if current.get(n) != expr]:
                del upcoming[name]  # changed or turned off: its next fire is computed anew
            for name, expr in current.items():
                if name not in upcoming:
                    upcoming[name] = (expr, next_fire(expr, now))
            if not upcoming and not self._live.live:
                return
            delay = math.inf
            if upcoming:
                name, (expr, at) = min(upcoming.items(), key=lambda item: item[1][1])
                delay = (at - now).total_seconds()
            wait = min(delay, self._refresh) if self._live.live else delay
            if wait > 0:
                if await _sleep_until_stopped(stop, wait):
                    return
                if wait < delay:
                    continue  # look at the settings again before that fire
            await self._fire(name, at, trigger="schedule")
            upcoming[name] = (expr, next_fire(expr, at))

    async def _current(self) -> dict[str, str]:
        try:
            return await self._live.current()
        except Exception as exc:  # the database away: keep to the fixed schedules meanwhile
            log.warning("schedule settings unreadable; fixed schedules only", error=str(exc))
            return dict(self._live.fixed)

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
