"""Concurrent searches go to the engine together: the batcher alone (a recording stand-in for
the engine: a pure unit test), then Qdrant Edge itself, whose concurrent searches must return
exactly what the same searches return one by one."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from exocortex.indexes.base import IndexFilter
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.indexes.query_batches import QueryBatcher
from exocortex.testing.indexes import index_document


class _Engine:
    """Squares numbers; a batch holding a negative number fails as a whole (as an engine's
    batch does when one of its requests is bad), a negative number alone fails alone."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.ones: list[int] = []
        self.started = threading.Event()
        self.release = threading.Event()

    def batch(self, requests: list[int]) -> list[int]:
        self.batches.append(list(requests))
        if any(r < 0 for r in requests):
            raise ValueError("bad request in the batch")
        return [r * r for r in requests]

    def one(self, request: int) -> int:
        self.ones.append(request)
        self.started.set()
        self.release.wait(5)  # the first search is still running while the others arrive
        if request < 0:
            raise ValueError(f"bad request {request}")
        return request * request


async def test_searches_that_arrive_while_one_runs_go_together() -> None:
    engine = _Engine()
    batcher: QueryBatcher[int, int] = QueryBatcher(engine.batch, engine.one)
    first = asyncio.create_task(batcher.query(1))
    assert await asyncio.to_thread(engine.started.wait, 5)  # the first went alone, at once
    rest = [asyncio.create_task(batcher.query(n)) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    engine.release.set()
    assert [await first, *[await t for t in rest]] == [1, 4, 9, 16]
    assert engine.ones == [1]
    assert engine.batches == [[2, 3, 4]]
    assert (batcher.batches, batcher.searches) == (2, 4)


async def test_a_failed_batch_gives_each_search_its_own_outcome() -> None:
    engine = _Engine()
    batcher: QueryBatcher[int, int] = QueryBatcher(engine.batch, engine.one)
    first = asyncio.create_task(batcher.query(1))
    assert await asyncio.to_thread(engine.started.wait, 5)
    good, bad = asyncio.create_task(batcher.query(5)), asyncio.create_task(batcher.query(-2))
    await asyncio.sleep(0)
    engine.release.set()
    assert await first == 1
    assert await good == 25
    with pytest.raises(ValueError, match="bad request -2"):
        await bad
    assert engine.batches == [[5, -2]]
    assert engine.ones == [1, 5, -2]


async def test_a_batch_holds_at_most_max_batch_searches() -> None:
    engine = _Engine()
    batcher: QueryBatcher[int, int] = QueryBatcher(engine.batch, engine.one, max_batch=2)
    first = asyncio.create_task(batcher.query(0))
    assert await asyncio.to_thread(engine.started.wait, 5)
    rest = [asyncio.create_task(batcher.query(n)) for n in range(1, 6)]
    await asyncio.sleep(0)
    engine.release.set()
    assert [await t for t in [first, *rest]] == [0, 1, 4, 9, 16, 25]
    assert engine.batches == [[1, 2], [3, 4]]
    assert engine.ones == [0, 5]  # the last one was alone in its batch


async def test_concurrent_edge_searches_return_what_sequential_ones_do(tmp_path: Path) -> None:
    dim = 32
    rng = np.random.default_rng(7)
    stored = rng.standard_normal((400, dim)).astype(np.float32)
    stored /= np.linalg.norm(stored, axis=1, keepdims=True)
    index = QdrantEdgeVectorIndex(tmp_path / "edge", dim)
    try:
        await index.upsert(
            [
                index_document(f"01{i:024d}", vector=v, namespace="a" if i % 2 else "b")
                for i, v in enumerate(stored)
            ]
        )
        queries = rng.standard_normal((24, dim)).astype(np.float32)
        filters = [IndexFilter(namespace="a"), IndexFilter(namespace="b"), IndexFilter()]
        asked: list[tuple[Any, IndexFilter]] = [(q, filters[i % 3]) for i, q in enumerate(queries)]
        alone = [await index.search(q, 10, f) for q, f in asked]
        together = await asyncio.gather(*(index.search(q, 10, f) for q, f in asked))
        assert [[(h.memory_id, round(h.score, 5)) for h in hits] for hits in together] == [
            [(h.memory_id, round(h.score, 5)) for h in hits] for hits in alone
        ]
        for hits, (_, flt) in zip(together, asked, strict=True):
            assert len(hits) == 10
            if flt.namespace == "a":
                assert all(int(h.memory_id[2:]) % 2 for h in hits)
        # The 24 concurrent searches shared batches (the 24 sequential ones each went alone).
        assert index._queries.batches < index._queries.searches - 10
    finally:
        await index.close()
