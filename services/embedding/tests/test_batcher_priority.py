"""The micro-batcher serves queries before a bulk backlog and slices large requests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import numpy as np

from exocortex.embedding.service import MicroBatcher


class RecordingModel:
    """Stands in for the model (a pure unit test): records each batch, takes a little time."""

    concurrent_calls = False

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def seconds(self, texts: list[str]) -> float:
        return 0.02

    def encode(self, texts: list[str]) -> Any:
        self.batches.append(list(texts))
        time.sleep(self.seconds(texts))
        return [np.zeros(4, dtype=np.float32) for _ in texts]


@asynccontextmanager
async def running(model: RecordingModel, max_batch: int) -> AsyncIterator[MicroBatcher]:
    batcher = MicroBatcher(model, max_batch=max_batch, max_wait_ms=0)  # type: ignore[arg-type]
    batcher.start()
    try:
        yield batcher
    finally:
        await batcher.stop()


async def test_a_query_does_not_wait_behind_a_bulk_backlog() -> None:
    model = RecordingModel()
    async with running(model, max_batch=4) as batcher:
        bulk = asyncio.create_task(batcher.embed([f"passage {i}" for i in range(20)]))
        await asyncio.sleep(0.005)  # the first slice is running
        query = await batcher.embed(["the query"], priority=0)
        vectors = await bulk
    assert len(query) == 1
    assert len(vectors) == 20
    assert all(len(b) <= 4 for b in model.batches)  # sliced to max_batch
    position = next(i for i, b in enumerate(model.batches) if "the query" in b)
    assert position <= 1, model.batches  # right after the slice that was already running
    # Order of the passages' vectors is kept across slices.
    assert [t for b in model.batches for t in b if t.startswith("passage")] == [
        f"passage {i}" for i in range(20)
    ]


class ConcurrentModel(RecordingModel):
    """A model that can run two calls at once; passage batches are slow."""

    concurrent_calls = True

    def seconds(self, texts: list[str]) -> float:
        return 0.01 if texts == ["the query"] else 0.5


async def test_a_query_runs_beside_a_running_batch_when_the_model_allows() -> None:
    async with running(ConcurrentModel(), max_batch=64) as batcher:
        bulk = asyncio.create_task(batcher.embed([f"passage {i}" for i in range(8)]))
        await asyncio.sleep(0.05)  # the slow batch is running
        await batcher.embed(["the query"], priority=0)
        assert not bulk.done()  # the query did not wait for it
        await bulk
