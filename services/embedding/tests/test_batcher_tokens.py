"""Token vectors are opt-in per request: a batch that holds a request asking for them runs the
model once for everyone, each request gets its own slice back, and the others get no tokens."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import numpy as np

from exocortex.embedding.service import MicroBatcher
from exocortex.testing.wait import until_async


class RecordingModel:
    """Stands in for the model: each text's vector and tokens carry its length, so slices can
    be checked; records which call each batch took. The first call waits until the test has
    queued everything, so the rest arrive while it runs and form one batch."""

    concurrent_calls = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.release = threading.Event()

    def _wait(self) -> None:
        if not self.calls[1:]:
            assert self.release.wait(30), "the test never released the first batch"

    def encode(self, texts: list[str]) -> Any:
        self.calls.append(("encode", list(texts)))
        self._wait()
        return [np.full(4, len(t), dtype=np.float32) for t in texts]

    def encode_with_tokens(self, texts: list[str]) -> Any:
        self.calls.append(("with_tokens", list(texts)))
        self._wait()
        vectors = [np.full(4, len(t), dtype=np.float32) for t in texts]
        tokens = [np.full((len(t), 4), 0.5, dtype=np.float32) for t in texts]
        return vectors, tokens


def _async(check: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    async def probe() -> bool:
        return check()

    return probe


async def test_tokens_only_for_those_who_ask_from_one_model_run() -> None:
    model = RecordingModel()
    batcher = MicroBatcher(model, max_batch=64, max_wait_ms=0)  # type: ignore[arg-type]
    batcher.start()
    try:
        first = asyncio.create_task(batcher.embed(["warm"]))
        await until_async(_async(lambda: bool(model.calls)), what="the first batch runs")
        plain = asyncio.create_task(batcher.embed(["a", "bb"]))
        wanted = asyncio.create_task(batcher.embed_with_tokens(["ccc", "dddd"]))
        await until_async(
            _async(lambda: batcher._lanes[1].queue.qsize() == 2),
            what="both requests wait behind the first batch",
        )
        assert not plain.done()
        assert not wanted.done()
        model.release.set()
        await first
        vectors = await plain
        both, tokens = await wanted
    finally:
        model.release.set()
        await batcher.stop()
    assert model.calls[0] == ("encode", ["warm"])
    # The two requests ran as one batch, once, through the call that also gives tokens.
    assert model.calls[1:] == [("with_tokens", ["a", "bb", "ccc", "dddd"])]
    assert [float(v[0]) for v in vectors] == [1.0, 2.0]
    assert [float(v[0]) for v in both] == [3.0, 4.0]
    assert tokens is not None
    assert [t.shape[0] for t in tokens] == [3, 4]


async def test_an_encoder_without_token_vectors_answers_none() -> None:
    class Plain:
        concurrent_calls = False

        def encode(self, texts: list[str]) -> Any:
            return [np.zeros(4, dtype=np.float32) for _ in texts]

    batcher = MicroBatcher(Plain(), max_batch=8, max_wait_ms=0)  # type: ignore[arg-type]
    batcher.start()
    try:
        vectors, tokens = await batcher.embed_with_tokens(["x", "y"])
    finally:
        await batcher.stop()
    assert len(vectors) == 2
    assert tokens is None
