"""The micro-batcher serves queries before a bulk backlog and slices large requests."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np

from exocortex.embedding.service import BULK, PASSAGE, MicroBatcher
from exocortex.testing.wait import until_async

QUERY = ["the query"]


class GatedModel:
    """Stands in for the model (a pure unit test): records each batch, and holds the first
    passage batch until the test releases it, so the test acts while a batch is running
    (no guessed sleeps)."""

    concurrent_calls = False

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.running = threading.Event()
        self.release = threading.Event()

    def encode(self, texts: list[str]) -> Any:
        self.batches.append(list(texts))
        if texts != QUERY and not self.running.is_set():
            self.running.set()
            assert self.release.wait(30), "the test never released the running batch"
        return [np.zeros(4, dtype=np.float32) for _ in texts]


@asynccontextmanager
async def running(model: GatedModel, max_batch: int) -> AsyncIterator[MicroBatcher]:
    batcher = MicroBatcher(model, max_batch=max_batch, max_wait_ms=0)  # type: ignore[arg-type]
    batcher.start()
    try:
        yield batcher
    finally:
        model.release.set()
        await batcher.stop()


async def _batch_running(model: GatedModel) -> None:
    assert await asyncio.to_thread(model.running.wait, 30), "no passage batch started"


async def test_a_query_does_not_wait_behind_a_bulk_backlog() -> None:
    model = GatedModel()
    async with running(model, max_batch=4) as batcher:
        bulk = asyncio.create_task(batcher.embed([f"passage {i}" for i in range(20)]))
        await _batch_running(model)  # the first slice holds the model's only thread
        query = asyncio.create_task(batcher.embed(QUERY, priority=0))
        # The query is handed to the model's thread while the slice still runs.
        executor = batcher._lanes[0].executor  # shared by both lanes for this model

        async def queued() -> bool:
            return executor._work_queue.qsize() == 1  # type: ignore[attr-defined]

        await until_async(queued, what="the query is queued for the model", interval=0.001)
        model.release.set()
        vectors = await asyncio.wait_for(bulk, 30)
        assert len(await asyncio.wait_for(query, 30)) == 1
    assert len(vectors) == 20
    assert all(len(b) <= 4 for b in model.batches)  # sliced to max_batch
    position = next(i for i, b in enumerate(model.batches) if b == QUERY)
    assert position == 1, model.batches  # right after the slice that was already running
    # Order of the passages' vectors is kept across slices.
    assert [t for b in model.batches for t in b if t.startswith("passage")] == [
        f"passage {i}" for i in range(20)
    ]


class ConcurrentModel(GatedModel):
    """A model that can run two calls at once."""

    concurrent_calls = True


async def test_a_query_runs_beside_a_running_batch_when_the_model_allows() -> None:
    model = ConcurrentModel()
    async with running(model, max_batch=64) as batcher:
        bulk = asyncio.create_task(batcher.embed([f"passage {i}" for i in range(8)]))
        await _batch_running(model)
        # The batch is held until released: the query can only finish beside it.
        await asyncio.wait_for(batcher.embed(QUERY, priority=0), 10)
        assert not bulk.done()
        model.release.set()
        assert len(await asyncio.wait_for(bulk, 30)) == 8


async def test_a_second_passage_batch_runs_beside_the_first_when_allowed() -> None:
    model = ConcurrentModel()
    batcher = MicroBatcher(model, max_batch=64, max_wait_ms=0, passage_calls=2)
    batcher.start()
    try:
        first = asyncio.create_task(batcher.embed(["a store's text"]))
        await _batch_running(model)
        # The first call is held: a store arriving now runs beside it, not behind it.
        await asyncio.wait_for(batcher.embed(["the next store's text"]), 10)
        assert not first.done()
        model.release.set()
        assert len(await asyncio.wait_for(first, 30)) == 1
    finally:
        model.release.set()
        await batcher.stop()


async def test_one_passage_call_at_a_time_by_default() -> None:
    model = ConcurrentModel()
    async with running(model, max_batch=64) as batcher:
        first = asyncio.create_task(batcher.embed(["a store's text"]))
        await _batch_running(model)
        second = asyncio.create_task(batcher.embed(["the next store's text"]))
        third = asyncio.create_task(batcher.embed(["and another"]))
        await until_async(
            lambda: _async(batcher._lanes[1].queue.qsize() == 2), what="both wait in the queue"
        )
        assert not second.done()
        model.release.set()
        await asyncio.wait_for(asyncio.gather(first, second, third), 30)
    # The two that waited were taken together, once the running call was done.
    assert model.batches[-1] == ["the next store's text", "and another"]


async def _async(value: bool) -> bool:
    return value


async def test_a_store_runs_beside_an_imports_batches_which_run_one_at_a_time() -> None:
    """An import's slices wait in a lane of their own, one call at a time; a store's text,
    arriving while one of them runs (held), runs beside it rather than behind the import."""
    model = ConcurrentModel()
    batcher = MicroBatcher(model, max_batch=4, max_wait_ms=0, passage_calls=2)
    batcher.start()
    try:
        bulk = asyncio.create_task(
            batcher.embed([f"imported {i}" for i in range(12)], priority=BULK)
        )
        await _batch_running(model)  # the import's first slice holds its call
        await asyncio.wait_for(batcher.embed(["a store's text"], priority=PASSAGE), 10)
        assert not bulk.done()
        assert batcher._lanes[BULK].queue.qsize() == 2  # the other slices wait their turn
        model.release.set()
        assert len(await asyncio.wait_for(bulk, 30)) == 12
    finally:
        model.release.set()
        await batcher.stop()
    imported = [t for b in model.batches for t in b if t.startswith("imported")]
    assert imported == [f"imported {i}" for i in range(12)]
