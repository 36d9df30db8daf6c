"""Projects memory events into the vector and keyword indexes.

An event only names a memory and a version; the projector reads the row as it is *now* in
Postgres and writes that. Replays, duplicates and out-of-order delivery therefore converge on the
latest state, and an older event can never overwrite a newer projection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol

from exocortex.core.db.pool import Pool
from exocortex.core.domain.vectors import from_bytes
from exocortex.indexes.base import IndexDocument, KeywordIndex, VectorIndex
from exocortex.indexes.shared_commits import SharedCommits
from exocortex.retrieval import metrics
from exocortex.retrieval.projection import repository
from exocortex.retrieval.projection.waiters import IndexedVersions

IndexKind = Literal["vector", "keyword"]
# Why the reconciler rewrote a document: absent from the index, held at another version than
# Postgres, or held although its row is archived, expired, deleted or (vector) has no vector.
Reason = Literal["missing", "stale", "orphaned"]
# Told the versions a batch made searchable (memory id -> version), once waiters here are
# released: the other replicas sharing the indexes release theirs (see events.IndexedAnnouncements).
Announce = Callable[[Mapping[str, int]], Awaitable[None]]
# The version a removed memory is marked at: any waiter for it is satisfied by the removal.
REMOVED_VERSION = 2**62
# Memories projected ahead of their events remembered at most (see Projector.project_now).
PROJECTED_NOW_MAX = 50_000


@dataclass(frozen=True)
class MemoryChange:
    """What a memory event says: a memory (and its chunks) changed, now at ``version``."""

    memory_id: str
    version: int
    chunk_ids: tuple[str, ...] = ()
    # The event's kind (stored, updated, enriched, ...); "" when not known.
    change: str = ""


class Projectable(Protocol):
    """A memory row as far as the indexes are concerned (``repository.ProjectedRow``; a full
    ``MemoryRecord`` read with its embedding has the same fields)."""

    @property
    def id(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def content_type(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def importance(self) -> float: ...
    @property
    def is_metadata(self) -> bool: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def keywords(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def version(self) -> int: ...
    @property
    def embedding(self) -> bytes | None: ...
    @property
    def tags(self) -> list[str]: ...

    def is_live(self, now: datetime) -> bool: ...


def is_indexable(memory: Projectable, now: datetime) -> bool:
    return memory.is_live(now)


def to_document(memory: Projectable) -> IndexDocument:
    embedding = memory.embedding
    return IndexDocument(
        memory_id=memory.id,
        version=int(memory.version),
        namespace=memory.namespace,
        content_type=memory.content_type,
        source=memory.source,
        tags=tuple(memory.tags or ()),
        created_at=memory.created_at,
        importance=float(memory.importance),
        is_metadata=bool(memory.is_metadata),
        parent_id=memory.parent_id,
        content=memory.content,
        keywords=memory.keywords or "",
        vector=from_bytes(bytes(embedding)) if embedding is not None else None,
    )


def _keywords_only(events: Sequence[MemoryChange]) -> set[str]:
    """The memories whose only events in the batch are ``enriched`` (keywords changed)."""
    kinds: dict[str, set[str]] = {}
    for event in events:
        kinds.setdefault(event.memory_id, set()).add(event.change)
        for chunk_id in event.chunk_ids:
            kinds.setdefault(chunk_id, set()).add("")
    return {memory_id for memory_id, seen in kinds.items() if seen == {"enriched"}}


async def _nothing() -> None:
    return None


class Projector:
    def __init__(
        self,
        pool: Pool,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        versions: IndexedVersions,
        announce: Announce | None = None,
    ) -> None:
        self._pool = pool
        self._vector = vector_index
        self._keyword = keyword_index
        self._versions = versions
        self._announce = announce
        # One batch at a time: the embedded engines have a single writer.
        self._lock = asyncio.Lock()
        # The version each memory was projected at by ``project_now`` (by id), until its event
        # comes: an event at or below it has nothing left to write (see ``project_now``).
        self._projected_now: dict[str, int] = {}

    async def project_now(self, wanted: Mapping[str, int]) -> None:
        """Project the memories ``wanted`` (id → the version waited for) as they are in
        Postgres now, ahead of their events, and release their waiters: read-your-writes
        without the trip through the outbox relay and NATS. Only where this process alone
        writes the indexes and a search commits what it must see (``SharedCommits``), so the
        write is searchable once applied.

        Their events still come and are acked as ever once a commit holds the write; an event
        whose version this projection already covered writes nothing again (no second read,
        no second index write). One with chunks is projected as usual: only its event names
        chunks that are no longer the memory's."""
        shared = self._keyword
        assert isinstance(shared, SharedCommits), "projection ahead needs shared commits"
        async with self._lock:
            # Their events may have been applied while this waited for the lock.
            memory_ids = [i for i, v in wanted.items() if (self._versions.get(i) or 0) < v]
            if not memory_ids:
                return
            rows = await repository.with_chunks(self._pool, memory_ids)
            await self._write(dict.fromkeys(memory_ids), rows, set())
            metrics.PROJECTED.labels("ahead").inc(len(memory_ids))
            shared.show()
            # Each is searchable at the version read: timed like an event's (TIME_TO_SEARCHABLE).
            read = [MemoryChange(i, int(rows[i].version)) for i in memory_ids if i in rows]
            self._release_waiters(dict.fromkeys(memory_ids), rows, read)
            for memory_id in memory_ids:
                row = rows.get(memory_id)
                # A row gone for good covers every event still to come for it.
                self._projected_now[memory_id] = (
                    int(row.version) if row is not None else REMOVED_VERSION
                )
            if len(self._projected_now) > PROJECTED_NOW_MAX:
                # Events that never came (a crash before the relay published them): forget
                # the oldest; their events, if they come, are projected as usual.
                for key in list(self._projected_now)[: PROJECTED_NOW_MAX // 10]:
                    del self._projected_now[key]

    def _covered(self, event: MemoryChange) -> bool:
        """Whether ``project_now`` already wrote what ``event`` announces (and forget it once
        its last event came)."""
        if event.chunk_ids:
            return False
        projected = self._projected_now.get(event.memory_id)
        if projected is None or projected < event.version:
            return False
        if projected == event.version:
            del self._projected_now[event.memory_id]
        return True

    async def project(self, events: Sequence[MemoryChange]) -> None:
        shared = self._keyword if isinstance(self._keyword, SharedCommits) else None
        applied: dict[str, int] | None = None
        async with self._lock:
            if shared is not None and self._projected_now:
                # Under the lock: a projection ahead running now is seen once it is done.
                left = [e for e in events if not self._covered(e)]
                metrics.PROJECTED.labels("covered").inc(len(events) - len(left))
                events = left
            ids: dict[str, None] = {}
            for event in events:
                ids.setdefault(event.memory_id, None)
                for chunk_id in event.chunk_ids:
                    ids.setdefault(chunk_id, None)
            if ids:
                # Read under the lock: batches may overlap (see app), and the one that read a
                # row first must not write it after one that read it later.
                rows = await repository.with_chunks(self._pool, list(ids))
                keywords_only = _keywords_only(events)
                removals = await self._write(ids, rows, keywords_only)
                metrics.PROJECTED.labels("event").inc(len(ids))
                # Vector writes are searchable as soon as they are applied; keyword writes once
                # committed. Applied vector writes already survive a crash of this process (the
                # engines write ahead, see VectorIndex), so the batch is acked without flushing
                # the vector index: the embedded engine's flush stalls every search for 30-50
                # ms, and the owner runs it once searches pause (see app.maintain_vector_index).
                # What someone asked for (a store, an edit, a deletion) is shown to every read
                # from now on; enrichment's keyword updates ride along with the next commit.
                asked = bool(removals) or any(i not in keywords_only for i in ids)
                if shared is None:
                    await self._keyword.flush()
                    applied = self._release_waiters(ids, rows, events)
                elif asked:
                    shared.show()
                    applied = self._release_waiters(ids, rows, events)
        if shared is not None:
            # The events are acked once a commit holds their writes (shared with the batches
            # around this one, outside the lock so they can be applied meanwhile), and so are
            # those a projection ahead already wrote.
            await shared.committed()
        if not ids:
            return
        if applied is None:
            applied = self._release_waiters(ids, rows, events)
        if self._announce is not None:
            await self._announce(applied)

    async def _write(
        self, ids: Mapping[str, None], rows: Mapping[str, Projectable], keywords_only: set[str]
    ) -> list[str]:
        """Write ``rows`` to both indexes and remove those of ``ids`` that are gone or no
        longer live (returned)."""
        now = datetime.now(UTC)
        upserts = [to_document(r) for r in rows.values() if is_indexable(r, now)]
        # An enrichment changes a memory's keywords only: its vector point (and its chunks,
        # which it does not touch) are left as they are, so the point stays in the vector
        # index's graph. Its version there stays one behind (see repository.vector_versions).
        vector_upserts = [
            d
            for d in upserts
            if d.memory_id not in keywords_only and d.parent_id not in keywords_only
        ]
        keyword_upserts = [d for d in upserts if d.parent_id not in keywords_only]
        removals = [i for i in ids if i not in rows or not is_indexable(rows[i], now)]
        if upserts:
            await asyncio.gather(
                self._vector.upsert(vector_upserts) if vector_upserts else _nothing(),
                self._keyword.upsert(keyword_upserts) if keyword_upserts else _nothing(),
            )
        if removals:
            await asyncio.gather(self._vector.delete(removals), self._keyword.delete(removals))
        return removals

    async def repair(self, kind: IndexKind, ids: Sequence[str]) -> dict[str, Reason]:
        """Make one index agree with Postgres for ``ids`` (suspects found by the reconciler):
        each is read as it is now, compared with what the index holds now, and written or
        removed where they differ. Holding the projector's lock, so it never interleaves with a
        batch; a suspect the projector fixed meanwhile is left alone. What was repaired, and
        why, by id."""
        if not ids:
            return {}
        index: VectorIndex | KeywordIndex = self._vector if kind == "vector" else self._keyword
        async with self._lock:
            rows = await repository.with_vectors(self._pool, list(ids))
            held = await index.versions(ids)
            enriched_last = (
                await repository.enriched_last(self._pool, list(ids)) if kind == "vector" else set()
            )
            now = datetime.now(UTC)
            repaired: dict[str, Reason] = {}
            upserts: list[IndexDocument] = []
            for memory_id in ids:
                row = rows.get(memory_id)
                wanted = row is not None and is_indexable(row, now)
                if kind == "vector" and row is not None and row.embedding is None:
                    wanted = False  # a chunked parent or an unembedded item: never a point
                have = held.get(memory_id)
                if not wanted:
                    if have is not None:
                        repaired[memory_id] = "orphaned"
                    continue
                assert row is not None
                accepted = repository.vector_versions(int(row.version), memory_id in enriched_last)
                if have is None or have not in accepted:
                    repaired[memory_id] = "missing" if have is None else "stale"
                    upserts.append(to_document(row))
            removals = [i for i, reason in repaired.items() if reason == "orphaned"]
            if upserts:
                await index.upsert(upserts)
            if removals:
                await index.delete(removals)
            if repaired and kind == "keyword":
                await self._keyword.flush()
            return repaired

    def _release_waiters(
        self,
        ids: dict[str, None],
        rows: Mapping[str, Projectable],
        events: Sequence[MemoryChange],
    ) -> dict[str, int]:
        """Mark what the batch made searchable (releasing this process's waiters at once) and
        return it, by memory id."""
        applied: dict[str, int] = {}
        event_versions = {(e.memory_id, e.version) for e in events}
        now = datetime.now(UTC)
        for row in rows.values():
            version = int(row.version)
            self._versions.mark(row.id, version)
            applied[row.id] = version
            if (row.id, version) in event_versions:
                # Only for the version an event announced: replays would inflate it.
                metrics.TIME_TO_SEARCHABLE.observe(max(0.0, (now - row.updated_at).total_seconds()))
        for missing in (i for i in ids if i not in rows):
            # Deleted rows: any waiter for them is satisfied by the removal.
            self._versions.mark(missing, REMOVED_VERSION)
            applied[missing] = REMOVED_VERSION
        return applied
