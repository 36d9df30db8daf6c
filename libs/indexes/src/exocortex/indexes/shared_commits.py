"""A keyword index whose commits are shared by many projector batches.

A commit of the embedded keyword engine has a fixed cost however few documents it holds (a
segment's files and term dictionaries, and the merges small segments lead to: 15-30 ms of CPU
at 1,000-10,000 documents, see docs/benchmarks/bulk-import.md), and one commit per projector
batch made it the larger part of a single store's cost. Here a write is applied to the
engine's writer at once and committed together with the writes around it: when a read needs
it, ``delay`` seconds after the first write that waits, or once ``max_pending`` writes wait,
whichever comes first.

Two kinds of write:

- *shown* (``show``): a reader must see it from now on. Every read (search, versions, held,
  count) first commits the shown writes it would otherwise miss, so a shown write is as good as
  searchable the moment it is applied, and the projector releases read-your-writes waiters
  then, without waiting for the commit.
- the others (enrichment's keyword updates) become visible with the next commit, whatever
  causes it; a search does not wait for them.

Either way the projector acks a batch's events only once a commit holds its writes
(``committed``), so an event whose write a crash lost is delivered again.

Only for an engine this process alone writes and searches (tantivy, the embedded default): a
search served by another process could not commit this one's writes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import suppress

from exocortex.indexes.base import DEFAULT_KEYWORDS_BOOST, IndexDocument, IndexFilter, IndexHit
from exocortex.indexes.base import KeywordIndex as KeywordIndexPort


class SharedCommits:
    """`KeywordIndex` over ``inner``, committing as the module says."""

    def __init__(self, inner: KeywordIndexPort, *, delay: float, max_pending: int = 2_000) -> None:
        self.name = inner.name
        self._inner = inner
        self._delay = delay
        self._max_pending = max_pending
        # Writes are numbered as they are applied; a commit covers every number up to the one
        # current when it started.
        self._applied = 0
        self._committed = 0
        self._shown = 0
        self._first_waiting: float | None = None
        self._waiting_documents = 0
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._now = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = False

    # Writes

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        await self._inner.upsert(docs)
        self._wrote(len(docs))

    async def delete(self, memory_ids: Sequence[str]) -> None:
        await self._inner.delete(memory_ids)
        self._wrote(len(memory_ids))

    def show(self) -> None:
        """Every write applied so far must be seen by the reads that follow."""
        self._shown = self._applied

    async def committed(self) -> None:
        """Return once a commit holds every write applied so far (raises what it raised)."""
        await self._wait_for(self._applied, now=False)

    async def flush(self) -> None:
        """Commit every write applied so far, now."""
        await self._wait_for(self._applied, now=True)

    # Reads: what they must see is committed first.

    async def search(
        self,
        query: str,
        limit: int,
        flt: IndexFilter,
        *,
        keywords_boost: float = DEFAULT_KEYWORDS_BOOST,
    ) -> list[IndexHit]:
        if self._shown > self._committed:
            await self._wait_for(self._shown, now=True)
        return await self._inner.search(query, limit, flt, keywords_boost=keywords_boost)

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        # Asked by waits and the reconciler, which compare with Postgres: every write counts.
        await self._wait_for(self._applied, now=True)
        return await self._inner.versions(memory_ids)

    async def held(self) -> dict[str, int]:
        await self._wait_for(self._applied, now=True)
        return await self._inner.held()

    async def count(self) -> int:
        if self._shown > self._committed:
            await self._wait_for(self._shown, now=True)
        return await self._inner.count()

    async def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
        # The engine commits what is left as it closes.
        await self._inner.close()
        self._closed = True
        self._committed = self._applied
        self._release(self._committed, None)

    # The committer

    def _wrote(self, count: int) -> None:
        self._applied += 1
        self._waiting_documents += count
        if self._first_waiting is None:
            self._first_waiting = time.monotonic()
        if self._waiting_documents >= self._max_pending:
            self._now.set()
        self._wake.set()
        if self._runner is None and not self._closing:
            self._runner = asyncio.create_task(self._run(), name="keyword-commits")

    async def _wait_for(self, number: int, *, now: bool) -> None:
        if number <= self._committed:
            return
        if self._closed:
            raise RuntimeError("the keyword index is closed")
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((number, future))
        if now:
            self._now.set()
        self._wake.set()
        if self._runner is None and not self._closing:
            self._runner = asyncio.create_task(self._run(), name="keyword-commits")
        # While closing, the close commits and releases it.
        await future

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._applied <= self._committed:
                # Nothing waits to be committed: wake anyone waiting on numbers already covered.
                self._now.clear()
                self._release(self._committed, None)
                continue
            if not self._now.is_set():
                started = self._first_waiting or time.monotonic()
                remaining = self._delay - (time.monotonic() - started)
                if remaining > 0:
                    with suppress(TimeoutError):
                        await asyncio.wait_for(self._now.wait(), remaining)
            self._now.clear()
            target = self._applied
            self._first_waiting = None
            self._waiting_documents = 0
            try:
                await self._inner.flush()
            except Exception as exc:  # the waiters fail, their batches are delivered again
                self._release(target, exc)
                if self._applied > self._committed:
                    self._first_waiting = time.monotonic()
                    self._wake.set()
                continue
            self._committed = max(self._committed, target)
            self._release(target, None)
            if self._applied > self._committed:
                # Written while committing: counted from now.
                self._first_waiting = time.monotonic()
                self._wake.set()

    def _release(self, upto: int, error: BaseException | None) -> None:
        keep: list[tuple[int, asyncio.Future[None]]] = []
        for number, future in self._waiters:
            if number <= upto:
                if not future.done():
                    if error is None:
                        future.set_result(None)
                    else:
                        future.set_exception(error)
            else:
                keep.append((number, future))
        self._waiters = keep
