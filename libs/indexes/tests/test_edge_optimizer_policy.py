"""The Qdrant Edge optimizer runs only while searches are idle (it blocks them while it works),
unless unindexed points pile up past the force threshold; write-side look-ups hold it off only
while few points wait for the graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from exocortex.indexes.base import IndexDocument, IndexFilter
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.testing.indexes import index_document

DIM = 8


def docs(n: int, offset: int = 0) -> list[IndexDocument]:
    rng = np.random.default_rng(offset)
    return [
        index_document(f"01{i + offset:024d}", vector=rng.standard_normal(DIM).astype(np.float32))
        for i in range(n)
    ]


async def test_busy_searches_defer_the_optimizer_until_idle(tmp_path: Path) -> None:
    index = QdrantEdgeVectorIndex(
        tmp_path, DIM, optimize_threshold=100, idle_seconds=30.0, indexing_threshold_kb=1
    )
    try:
        await index.search(np.ones(DIM, dtype=np.float32), 5, IndexFilter(namespace="n"))
        await index.upsert(docs(300))
        await index.flush()
        assert index._pending() == 300  # searched just now: not optimized
        assert await index.optimize_when_idle() is False
        # The idle period passes (moved back in time rather than slept, so a slow machine
        # cannot make the writes above look idle).
        index._last_search -= 31.0
        assert await index.optimize_when_idle(threshold=1) is True
        assert index._pending() == 0
        hits = await index.search(np.ones(DIM, dtype=np.float32), 5, IndexFilter(namespace="n"))
        assert len(hits) == 5
    finally:
        await index.close()


async def test_write_side_lookups_hold_the_optimizer_off_only_while_few_points_wait(
    tmp_path: Path,
) -> None:
    index = QdrantEdgeVectorIndex(
        tmp_path,
        DIM,
        optimize_threshold=100,
        idle_seconds=30.0,
        indexing_threshold_kb=1,
        lookup_scan_limit=250,
    )
    probe = np.ones(DIM, dtype=np.float32)
    try:
        await index.upsert(docs(200))
        index._last_search -= 31.0  # idle so far
        await index.search(probe, 5, IndexFilter(namespace="n"), write_side=True)
        assert await index.optimize_when_idle() is False  # 200 waiting: the look-up counts
        index._last_search -= 31.0
        await index.upsert(docs(100, offset=1000))
        # 300 waiting, past the limit: a look-up no longer keeps the graph from being built...
        await index.search(probe, 5, IndexFilter(namespace="n"), write_side=True)
        assert await index.optimize_when_idle() is True
        assert index._pending() == 0
        # ...while someone's search still does, however many wait.
        await index.upsert(docs(300, offset=2000))
        await index.search(probe, 5, IndexFilter(namespace="n"))
        assert await index.optimize_when_idle() is False
        hits = await index.search(probe, 5, IndexFilter(namespace="n"), write_side=True)
        assert len(hits) == 5
    finally:
        await index.close()


async def test_flush_optimizes_when_idle_or_past_the_force_threshold(tmp_path: Path) -> None:
    index = QdrantEdgeVectorIndex(
        tmp_path,
        DIM,
        optimize_threshold=100,
        idle_seconds=60.0,
        force_threshold=250,
        indexing_threshold_kb=1,
    )
    try:
        await index.search(np.ones(DIM, dtype=np.float32), 5, IndexFilter(namespace="n"))
        await index.upsert(docs(200))
        await index.flush()
        assert index._pending() == 200
        await index.upsert(docs(100, offset=1000))
        await index.flush()
        assert index._pending() == 0  # 300 ≥ force threshold: optimized although busy
    finally:
        await index.close()


async def test_a_reopened_shard_indexes_what_updates_left_unindexed(tmp_path: Path) -> None:
    """Updated points leave their old versions in the indexed segments, so the engine's indexed
    count can exceed the live points while the new versions sit unindexed; the first idle run
    after opening must still index them."""
    first = QdrantEdgeVectorIndex(tmp_path, DIM, indexing_threshold_kb=1)
    try:
        await first.upsert(docs(300))
        assert await first.optimize() is True
        await first.upsert(docs(300))  # every point again: new versions, old ones indexed
        await first.flush()  # below the optimize threshold: stays unindexed
    finally:
        await first.close()
    again = QdrantEdgeVectorIndex(tmp_path, DIM, indexing_threshold_kb=1, idle_seconds=0.0)
    try:
        info = again._shard.info()
        assert info.indexed_vectors_count >= info.points_count  # the engine's count can't tell
        assert await again.count() == 300  # but the live-point count stays right
        assert again._pending() == 0
        assert await again.optimize_when_idle() is True  # the first idle run indexes them
        assert await again.optimize_when_idle() is False  # and then nothing is left to do
        hits = await again.search(np.ones(DIM, dtype=np.float32), 5, IndexFilter(namespace="n"))
        assert len(hits) == 5
    finally:
        await again.close()
