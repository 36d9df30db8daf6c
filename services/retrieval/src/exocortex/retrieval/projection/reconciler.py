"""Repairs the projections from Postgres, whatever left them behind.

The projector keeps the indexes current event by event, and acks an event only once its write
is applied (see projector). What it cannot see is a write that never produced an event it could
act on: an index directory restored from an older copy or lost with its disk, an event set
aside as undeliverable or dropped by hand, a row changed outside the write path. So the
reconciler compares, now and then, what each index holds (``held()``: ids with their projected
version) with what Postgres says it should hold (active, unexpired rows at their current
version; for the vector index only rows that carry an embedding), and hands every disagreement
to ``Projector.repair``, which re-reads the row and writes, rewrites or removes the document. A
lost index write can therefore not stay lost longer than one interval.

It runs on start and then every ``EXO_RETRIEVAL_RECONCILE_INTERVAL_SECONDS``, in the
background: Postgres is read in keyset pages of ids and versions (no content), the indexes are
listed page by page, and repairs go through the projector in batches, each holding the
projector's lock only for that batch. When nothing disagrees it writes nothing.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass, field

from exocortex.core.db.pool import Pool
from exocortex.core.logging import get_logger
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.retrieval import metrics
from exocortex.retrieval.projection import repository
from exocortex.retrieval.projection.projector import IndexKind, Projector, Reason

log = get_logger(__name__)

# Rows read from Postgres per query (ids, versions and a flag: about 60 bytes each).
PAGE_ROWS = 5_000
# Suspects handed to the projector per batch: the lock is held for one batch at a time.
REPAIR_BATCH = 500
# Ids named in a run's log line per index and reason (the counters have the totals).
LOG_SAMPLE = 10
# How long a run waits for the projector to work through the stream's backlog before it
# repairs: what the projector is about to write anyway is neither repaired nor counted.
SETTLE_MAX_SECONDS = 60.0


@dataclass
class ReconcileReport:
    """One run: how many rows Postgres says the indexes should hold, what was repaired in which
    index and why, and how long it took."""

    expected: int = 0
    repaired: Counter[tuple[IndexKind, Reason]] = field(default_factory=Counter)
    samples: dict[str, list[str]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.repaired.values())


class Reconciler:
    def __init__(
        self,
        pool: Pool,
        projector: Projector,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        *,
        backlog: Callable[[], Awaitable[int]] | None = None,
        page_rows: int = PAGE_ROWS,
        repair_batch: int = REPAIR_BATCH,
    ) -> None:
        self._pool = pool
        self._backlog = backlog
        self._projector = projector
        self._indexes: dict[IndexKind, VectorIndex | KeywordIndex] = {
            "vector": vector_index,
            "keyword": keyword_index,
        }
        self._page_rows = page_rows
        self._repair_batch = repair_batch

    async def _expected(self) -> tuple[dict[str, tuple[int, ...]], dict[str, tuple[int, ...]]]:
        """What Postgres says each index should hold: (keyword, vector) ids with the versions
        each may be held at."""
        keyword: dict[str, tuple[int, ...]] = {}
        vector: dict[str, tuple[int, ...]] = {}
        after = ""
        while True:
            rows = await repository.expected_page(self._pool, after, self._page_rows)
            for memory_id, version, has_vector, enriched_last in rows:
                keyword[memory_id] = (version,)
                if has_vector:
                    vector[memory_id] = repository.vector_versions(version, enriched_last)
            if len(rows) < self._page_rows:
                return keyword, vector
            after = rows[-1][0]

    async def settle(self, stop: asyncio.Event | None = None) -> None:
        """Wait (at most ``SETTLE_MAX_SECONDS``) until the projector has no events waiting:
        a document that only lags behind its event is the projector's to write."""
        if self._backlog is None:
            return
        deadline = time.monotonic() + SETTLE_MAX_SECONDS
        while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
            with suppress(Exception):
                if await self._backlog() <= 0:
                    return
            await asyncio.sleep(0.5)

    def turn(self, name: str) -> AbstractAsyncContextManager[bool]:
        """Whether this process holds the advisory lock ``name`` for the block (see
        ``reconcile_periodically``)."""
        return repository.turn(self._pool, name)

    async def run_once(self) -> ReconcileReport:
        start = time.perf_counter()
        report = ReconcileReport()
        keyword, vector = await self._expected()
        report.expected = len(keyword)
        plan: tuple[tuple[IndexKind, dict[str, tuple[int, ...]]], ...] = (
            ("vector", vector),
            ("keyword", keyword),
        )
        for kind, expected in plan:
            held = await self._indexes[kind].held()
            suspects = [i for i in expected if held.get(i) not in expected[i]]
            suspects += [i for i in held if i not in expected]
            if suspects:
                # Most suspects of a busy moment are writes in flight; once the projector has
                # caught up, repair() looks at each again and leaves those alone.
                await self.settle()
            for n in range(0, len(suspects), self._repair_batch):
                batch = suspects[n : n + self._repair_batch]
                repaired = await self._projector.repair(kind, batch)
                for memory_id, reason in repaired.items():
                    report.repaired[(kind, reason)] += 1
                    metrics.RECONCILER_REPAIRED.labels(kind, reason).inc()
                    sample = report.samples.setdefault(f"{kind}_{reason}", [])
                    if len(sample) < LOG_SAMPLE:
                        sample.append(memory_id)
        report.seconds = time.perf_counter() - start
        metrics.RECONCILER_LAST_RUN.set(time.time())
        metrics.RECONCILER_DURATION.set(report.seconds)
        counts = {f"{kind}_{reason}": n for (kind, reason), n in sorted(report.repaired.items())}
        # A clean run is routine; a repair means some write was lost and is worth a warning.
        emit = log.warning if report.total else log.info
        emit(
            "reconciler run",
            expected=report.expected,
            repaired=report.total,
            seconds=round(report.seconds, 3),
            **counts,
            **({"ids": report.samples} if report.samples else {}),
        )
        return report


async def _runs(reconciler: Reconciler, interval: float, stop: asyncio.Event) -> None:
    """A run now, then every ``interval`` seconds until ``stop``; a failed run is logged and
    tried again at the next interval."""
    while not stop.is_set():
        try:
            await reconciler.run_once()
        except Exception as exc:
            log.warning("reconciler run failed", error=str(exc))
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)


async def reconcile_periodically(
    reconciler: Reconciler, interval: float, stop: asyncio.Event, *, turn: str | None = None
) -> None:
    """Run on start (once the projector has drained the backlog that built up while this
    process was away), then every ``interval`` seconds until ``stop``.

    With ``turn`` (an advisory-lock name per set of indexes), one of the replicas sharing index
    servers reconciles: the one holding the lock runs every interval for as long as it lives,
    the others try again each interval and take over when its connection, and so the lock, goes
    away. The shared indexes are then read once per interval, not once per replica."""
    await reconciler.settle(stop)
    if turn is None:
        await _runs(reconciler, interval, stop)
        return
    while not stop.is_set():
        try:
            async with reconciler.turn(turn) as mine:
                if mine:
                    await _runs(reconciler, interval, stop)
        except Exception as exc:
            log.warning("reconciler turn failed", error=str(exc))
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval)
