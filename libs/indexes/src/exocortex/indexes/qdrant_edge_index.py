"""Vector index on Qdrant Edge: Qdrant's engine in-process, persisted in a local directory.

Only one process may open the directory (the retrieval service owns it).

The engine builds HNSW graphs only when its optimizer runs, and Edge runs the optimizer only on
request. Unindexed points are searched by brute force (about 1.5 ms per 10k points at 384
dimensions). The optimizer holds the interpreter lock while it works (seconds per ~10k points,
tens of seconds on a busy machine), and a search arriving meanwhile waits for all of it. So the
optimizer runs only when searches are idle: `flush()` optimizes once enough unindexed points have
piled up *and* no search came in for `idle_seconds`; `optimize_when_idle()` (called periodically
by the owner) catches up after a bulk load that happened while searches kept coming. Only when
unindexed points exceed `force_threshold` (where brute force itself would cost more than a short
pause) does a flush optimize regardless. Segment size is capped so each run stays short. The
write side's look-ups (``write_side``) hold the optimizer off only while fewer than
`lookup_scan_limit` points wait for the graph.

Writes are safe from a crash of the process as soon as they are applied: the engine appends each
to its write-ahead log first and replays the log when the shard is opened again. A flush writes
the segments themselves to disk (so the log can be dropped and a machine that loses power keeps
them); it holds the interpreter lock for 30-50 ms at 100k points even when nothing changed, so
the owner calls `flush_when_idle()` periodically instead of flushing after each write: it flushes
once searches pause, and at the latest `max_age` seconds after the first unflushed write.

A filter condition every live point meets is left out of the engine's query: the graph walk then
checks no payload per visited point. Measured at 100k memories in one namespace: 2.1-2.6 ms a
search without the namespace and "not metadata" conditions, 3.2-3.6 ms with them. The adapter
learns what all points share from exact facet counts (at open, and after writes broke it, once
searches pause); a write that breaks it drops the shortcut before it lands, and hits are checked
against the left-out conditions anyway, so a search racing that write stays correct.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from exocortex.indexes.base import IndexDocument, IndexFilter, IndexHit, Vector
from exocortex.indexes.qdrant_common import (
    HELD_PAGE,
    HIT_FIELDS,
    PAYLOAD_INDEXES,
    VERSION_FIELDS,
    Condition,
    FilterPlan,
    Match,
    MatchAny,
    Range,
    as_floats,
    payload_of,
    plan_filter,
    point_id,
    split_upsert,
    versions_from,
)
from exocortex.indexes.query_batches import QueryBatcher

_SCHEMA_TYPES: dict[str, Any] = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
}

# ~13k vectors of 384 float32 per segment: HNSW build per optimizer run stays at a few seconds.
_MAX_SEGMENT_KB = 20_000
# A segment gets its HNSW graph once it holds this much vector data (~1,000 vectors of 384
# float32). The engine's own default leaves up to a whole segment (~13k vectors) searched by
# brute force for good: measured at 100k, 7k such points (left by re-upserted memories) doubled
# the vector search, 4.7 -> 2.5 ms once indexed. Matches optimize_when_idle's 1,000 points.
DEFAULT_INDEXING_THRESHOLD_KB = 1_500
# Write-side look-ups (semantic dedup, relation discovery) keep the optimizer waiting like
# searches only while fewer points than this wait for the graph. An import makes one look-up a
# memory, and each scans every unindexed point of its namespace by brute force: with the graph
# built only at force_threshold, a 100k import fell to half the model's speed. A build of this
# many points costs a few seconds, the scans it saves cost more: a 30k import went from 0.56 to
# 0.65 of the model (docs/benchmarks/bulk-import.md).
LOOKUP_SCAN_LIMIT = 10_000
# Indexed segments also keep an 8-bit copy of their vectors in RAM (a quarter of the float32
# size). The graph walk compares the query with those; the best candidates are then rescored
# with the full vectors, so the order returned is exact. Measured at 100k with real questions:
# 5.5 -> 3.2 ms a search, the same top 10 and top 50 as without it (recall against an exact
# scan 0.996 and 0.993 both ways).
_QUANTIZATION = qe.ScalarQuantizationConfig(type=qe.ScalarType.Int8, always_ram=True)
_SEARCH_PARAMS = qe.SearchParams(
    quantization=qe.QuantizationSearchParams(rescore=True, oversampling=1.0)
)
# Read back when a condition was left out of the query, to check hits against it.
_CHECK_FIELDS = [*HIT_FIELDS, "namespace", "is_metadata"]


def _condition(cond: Condition) -> Any:
    if isinstance(cond, Match):
        return qe.FieldCondition(cond.key, match=qe.MatchValue(cond.value))
    if isinstance(cond, MatchAny):
        return qe.FieldCondition(cond.key, match=qe.MatchAny(list(cond.values)))
    if isinstance(cond, Range):
        return qe.FieldCondition(cond.key, range=qe.RangeFloat(gte=cond.gte, lt=cond.lt))
    return qe.HasIdCondition(set(cond.ids))


def edge_filter(plan: FilterPlan) -> Any:
    if plan.empty:
        return None
    return qe.Filter(
        must=[_condition(c) for c in plan.must] or None,
        must_not=[_condition(c) for c in plan.must_not] or None,
    )


class QdrantEdgeVectorIndex:
    """`VectorIndex` over an embedded Qdrant Edge shard at `path` (cosine, HNSW)."""

    name = "qdrant-edge"

    def __init__(
        self,
        path: Path,
        dim: int,
        *,
        optimize_threshold: int = 8_000,
        idle_seconds: float = 3.0,
        force_threshold: int = 60_000,
        indexing_threshold_kb: int = DEFAULT_INDEXING_THRESHOLD_KB,
        lookup_scan_limit: int = LOOKUP_SCAN_LIMIT,
    ) -> None:
        self._path = path
        self._dim = dim
        self._optimize_threshold = optimize_threshold
        self._idle_seconds = idle_seconds
        self._force_threshold = force_threshold
        self._last_search = 0.0
        self._lookup_scan_limit = lookup_scan_limit
        self._indexing_threshold_kb = indexing_threshold_kb
        # Points written since the optimizer last ran. Counted here because the engine's own
        # figures cannot tell: its indexed count keeps replaced points' old versions, so after
        # updates it can exceed the live points while thousands sit unindexed. Until the first
        # run after opening, what a previous process left is unknown: one run (a no-op when
        # there is nothing to index) settles it.
        self._written = 0
        self._ran_since_open = False
        # When the oldest write not yet flushed was applied (monotonic; None: all flushed).
        self._unflushed_since: float | None = None
        # Writes, flush and optimize are serialised; searches run concurrently with them.
        self._write_lock = threading.Lock()
        self._closed = False
        self._shard = self._open()
        # Searches that arrive while one runs go to the engine together (see query_batches).
        self._queries: QueryBatcher[Any, list[Any]] = QueryBatcher(
            self._query_batch, self._query_one
        )
        # What every live point shares, as far as known (see _survey): the namespace they are
        # all in (None: several, or unknown) and whether none is a metadata memory.
        self._sole_namespace: str | None = None
        self._metadata_free = False
        self._empty = False  # no point stored when surveyed, and none written since
        self._survey_stale = False
        self._survey()

    def _query_batch(self, requests: list[Any]) -> list[list[Any]]:
        batch: list[list[Any]] = self._shard.query_batch(qe.QueryBatchRequest(requests))
        return batch

    def _query_one(self, request: Any) -> list[Any]:
        points: list[Any] = self._shard.query(request)
        return points

    def _config(self) -> Any:
        return qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=self._dim, distance=qe.Distance.Cosine),
            # Payload is small; keeping it in RAM makes filter checks and hit payloads cheap.
            payload_memory=qe.Memory.Cached,
            # A shard created without it gets it segment by segment on the optimizer's next
            # run (the engine rebuilds segments whose config differs).
            quantization_config=_QUANTIZATION,
            optimizers=qe.EdgeOptimizersConfig(
                max_segment_size=_MAX_SEGMENT_KB, indexing_threshold=self._indexing_threshold_kb
            ),
        )

    def _open(self) -> Any:
        self._path.mkdir(parents=True, exist_ok=True)
        if (self._path / "edge_config.json").exists():
            # Passing the config makes the engine reject a shard of another dimension.
            shard = qe.EdgeShard.load(str(self._path), self._config())
        else:
            shard = qe.EdgeShard.create(str(self._path), self._config())
        existing = set(shard.info().payload_schema)
        for field_name, kind in PAYLOAD_INDEXES:
            if field_name not in existing:
                shard.update(qe.UpdateOperation.create_field_index(field_name, _SCHEMA_TYPES[kind]))
        return shard

    def _survey(self) -> None:
        """Learn from exact facet counts what every live point shares. They walk the points
        holding the interpreter (about 25 ms at 100k), so this runs at open and otherwise only
        once searches pause after a write broke what was known."""
        total = self._shard.count(qe.CountRequest(exact=False))
        self._empty = total == 0
        spaces = self._shard.facet(qe.FacetRequest("namespace", limit=2, exact=True)).hits
        sole = len(spaces) == 1 and spaces[0].count == total
        self._sole_namespace = str(spaces[0].value) if sole else None
        kinds = self._shard.facet(qe.FacetRequest("is_metadata", limit=2, exact=True)).hits
        self._metadata_free = all(int(h.value) == 0 or h.count == 0 for h in kinds)
        self._survey_stale = False

    def _forget_shared(self, docs: Sequence[IndexDocument]) -> None:
        """Before points land: drop what they no longer share with the rest."""
        if not docs:
            return
        if self._empty:  # the first points set what all share
            self._empty = False
            spaces = {d.namespace for d in docs}
            self._sole_namespace = spaces.pop() if len(spaces) == 1 else None
        elif self._sole_namespace is not None and any(
            d.namespace != self._sole_namespace for d in docs
        ):
            self._sole_namespace = None
            self._survey_stale = True
        if self._metadata_free and any(d.is_metadata for d in docs):
            self._metadata_free = False
            self._survey_stale = True

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        keep, drop = split_upsert(docs)
        if not keep and not drop:
            return
        points = [qe.Point(point_id(d.memory_id), as_floats(d.vector), payload_of(d)) for d in keep]
        await asyncio.to_thread(self._write, points, [point_id(i) for i in drop], keep)

    def _write(
        self, points: list[Any], drop: list[Any], docs: Sequence[IndexDocument] = ()
    ) -> None:
        with self._write_lock:
            self._forget_shared(docs)
            if self._unflushed_since is None:
                self._unflushed_since = time.monotonic()
            if points:
                self._shard.update(qe.UpdateOperation.upsert_points(points))
                self._written += len(points)
            if drop:
                self._shard.update(qe.UpdateOperation.delete_points(drop))

    async def delete(self, memory_ids: Sequence[str]) -> None:
        if memory_ids:
            await asyncio.to_thread(self._write, [], [point_id(i) for i in memory_ids])

    async def search(
        self, vector: Vector, limit: int, flt: IndexFilter, *, write_side: bool = False
    ) -> list[IndexHit]:
        if limit <= 0:
            return []
        if not write_side or self._written < self._lookup_scan_limit:
            # Searches defer the optimizer (it stalls them). Write-side look-ups do so only while
            # few points wait for the graph: past that, each of them scans more than its share
            # of a build costs, and a long import would scan ever more points (LOOKUP_SCAN_LIMIT).
            self._last_search = time.monotonic()
        # Read once: a write may change them meanwhile (hits are checked below).
        skip_namespace = flt.namespace is not None and flt.namespace == self._sole_namespace
        skip_metadata = flt.exclude_metadata and self._metadata_free
        engine_flt = replace(
            flt,
            namespace=None if skip_namespace else flt.namespace,
            exclude_metadata=flt.exclude_metadata and not skip_metadata,
        )
        checked = skip_namespace or skip_metadata
        request = qe.QueryRequest(
            limit=limit,
            query=qe.Query.Nearest(as_floats(vector)),
            filter=edge_filter(plan_filter(engine_flt)),
            with_payload=_CHECK_FIELDS if checked else HIT_FIELDS,
            with_vector=False,
            params=_SEARCH_PARAMS,
        )
        points = await self._queries.query(request)
        if checked:
            points = [
                p
                for p in points
                if not (skip_namespace and p.payload.get("namespace") != flt.namespace)
                and not (skip_metadata and p.payload.get("is_metadata"))
            ]
        return [
            IndexHit(
                memory_id=str(p.payload["memory_id"]),
                score=float(p.score),
                parent_id=p.payload.get("parent_id"),
            )
            for p in points
        ]

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        if not memory_ids:
            return {}
        ids = [point_id(i) for i in memory_ids]
        records = await asyncio.to_thread(self._shard.retrieve, ids, VERSION_FIELDS, False)
        return versions_from(r.payload for r in records)

    async def held(self) -> dict[str, int]:
        out: dict[str, int] = {}
        offset: Any = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=HELD_PAGE, with_payload=VERSION_FIELDS, with_vector=False
            )
            # One page per thread hop: the engine holds the interpreter while it reads, so
            # searches get their turn between pages.
            records, offset = await asyncio.to_thread(self._shard.scroll, request)
            out.update(versions_from(r.payload for r in records))
            if offset is None:
                return out

    async def count(self) -> int:
        # Without a filter the engine's quick count is its live-point tally, exact after updates
        # and deletes too; the "exact" count walks every point holding the interpreter (13 ms at
        # 100k), which stalled searches each time the gauges or a ping asked.
        n: int = self._shard.count(qe.CountRequest(exact=False))
        return n

    async def flush(self) -> None:
        await asyncio.to_thread(self._flush)

    def _flush(self) -> None:
        with self._write_lock:
            self._shard.flush()
            self._unflushed_since = None
            if self._should_optimize(self._optimize_threshold):
                self._run_optimizer()

    async def flush_when_idle(self, max_age: float) -> bool:
        """Flush writes not yet flushed once searches pause, or once the oldest of them is
        `max_age` seconds old whatever the searches do. True if it flushed."""
        since = self._unflushed_since
        if self._closed or since is None:
            return False
        if not self.idle() and time.monotonic() - since < max_age:
            return False
        await asyncio.to_thread(self._flush)
        return True

    def _run_optimizer(self) -> bool:
        """Run the engine's optimizer; True if it changed anything."""
        changed = bool(self._shard.optimize())
        self._shard.flush()
        self._unflushed_since = None
        self._written = 0
        self._ran_since_open = True
        if self._survey_stale:
            self._survey()
        return changed

    def _pending(self) -> int:
        return self._written

    def idle(self) -> bool:
        return time.monotonic() - self._last_search >= self._idle_seconds

    def _should_optimize(self, threshold: int) -> bool:
        if self._written >= self._force_threshold:
            return True
        return self.idle() and (not self._ran_since_open or self._written >= threshold)

    async def optimize_when_idle(self, threshold: int = 1_000) -> bool:
        """Index what piled up while searches were busy, once they pause. True if that
        changed the index."""
        if self._closed or not self.idle():
            return False
        return await asyncio.to_thread(self._optimize_when_idle, threshold)

    def _optimize_when_idle(self, threshold: int) -> bool:
        with self._write_lock:
            if self._closed:
                return False
            if not self._should_optimize(threshold):
                if self._survey_stale:
                    self._survey()
                return False
            return self._run_optimizer()

    async def optimize(self) -> bool:
        """Index and compact every segment now (e.g. after a bulk rebuild, before serving)."""
        return await asyncio.to_thread(self._optimize)

    def _optimize(self) -> bool:
        with self._write_lock:
            return self._run_optimizer()

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._close)

    def _close(self) -> None:
        with self._write_lock:
            self._shard.flush()
            self._shard.close()
