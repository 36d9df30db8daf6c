"""Searches first: background work done in this process waits for searches to pause.

Enrichment works through every stored memory in the background, and part of that work runs
here, in the process that answers searches: a neighbour lookup per memory (`Nearest` with
`background`), then the index writes of its result. The embedded engines hold the interpreter
lock while they search or write, so that work stalls the searches running beside it, whatever
the enrichment process's own CPU priority: after a bulk import of 100k memories, searches took
twice as long until enrichment caught up.

So a background lookup waits until no search is running and none ended within `quiet` seconds.
It waits `max_wait` seconds at most, so under a steady stream of searches enrichment still moves
on, one memory at a time; and as enrichment handles one memory after the other, waiting at the
lookup paces all of its work, the index writes of its results included. Those writes are not
held back themselves: they share the projector's queue with stores and updates, which users
wait for, and must never queue behind a wait. Ingest's lookups (deduplication on store) never
wait either.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager

from exocortex.retrieval import metrics


class SearchActivity:
    def __init__(self, *, quiet: float = 0.25, max_wait: float = 2.0) -> None:
        self.quiet = quiet
        self.max_wait = max_wait
        self._running = 0
        self._last_end = float("-inf")

    @contextmanager
    def searching(self) -> Iterator[None]:
        """Mark a search as running for the duration of the block."""
        self._running += 1
        try:
            yield
        finally:
            self._running -= 1
            self._last_end = time.monotonic()

    def paused(self) -> bool:
        return self._running == 0 and time.monotonic() - self._last_end >= self.quiet

    async def wait_for_pause(self, work: str) -> float:
        """Wait until searches pause (or `max_wait` passes); returns the seconds waited."""
        started = time.monotonic()
        deadline = started + self.max_wait
        while not self.paused():
            now = time.monotonic()
            if now >= deadline:
                break
            # A search that just ended leaves `quiet` to run out; one still running, a short poll.
            left = self.quiet - (now - self._last_end) if self._running == 0 else self.quiet / 5
            await asyncio.sleep(min(max(left, 0.005), deadline - now))
        waited = time.monotonic() - started
        metrics.BACKGROUND_WAIT.labels(work).observe(waited)
        return waited
