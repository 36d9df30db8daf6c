"""The micro-batcher in front of the encoder."""

from __future__ import annotations

import asyncio
import itertools
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field

from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.embedding import metrics
from exocortex.embedding.encoders import Encoder

log = get_logger(__name__)


@dataclass
class _Pending:
    texts: list[str]
    future: asyncio.Future[list[Vector]] = field(repr=False)


class MicroBatcher:
    """Merges concurrent embed calls into one model call: many small requests (one query each)
    cost about as much as one batch, which is what keeps throughput up under load."""

    def __init__(self, model: Encoder, *, max_batch: int, max_wait_ms: float) -> None:
        self._model = model
        self._max_batch = max_batch
        self._max_wait = max_wait_ms / 1000.0
        # (priority, arrival, pending): queries (0) are served before passages (1), so a search
        # never waits behind a bulk import's backlog, only behind the batch already running.
        self._queue: asyncio.PriorityQueue[tuple[int, int, _Pending]] = asyncio.PriorityQueue()
        self._arrivals = itertools.count()
        # One model thread: the runtime parallelises inside a batch already.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="embedding-batcher")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def embed(self, texts: list[str], *, priority: int = 1) -> list[Vector]:
        if not texts:
            return []
        # A large request is queued in max_batch slices, so it cannot hold the model for long.
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[list[Vector]]] = []
        for start in range(0, len(texts), self._max_batch):
            future: asyncio.Future[list[Vector]] = loop.create_future()
            pending = _Pending(texts[start : start + self._max_batch], future)
            await self._queue.put((priority, next(self._arrivals), pending))
            futures.append(future)
        parts = await asyncio.gather(*futures)
        return [v for part in parts for v in part]

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            _, _, first = await self._queue.get()
            batch = [first]
            size = len(first.texts)
            deadline = loop.time() + self._max_wait
            while size < self._max_batch:
                timeout = deadline - loop.time()
                if timeout <= 0:
                    break
                try:
                    _, _, item = await asyncio.wait_for(self._queue.get(), timeout)
                except TimeoutError:
                    break
                batch.append(item)
                size += len(item.texts)
            texts = [t for item in batch for t in item.texts]
            start = time.perf_counter()
            try:
                vectors = await loop.run_in_executor(self._executor, self._model.encode, texts)
            except Exception as exc:
                for item in batch:
                    if not item.future.done():
                        item.future.set_exception(exc)
                continue
            metrics.DURATION.observe(time.perf_counter() - start)
            metrics.BATCH_SIZE.observe(len(texts))
            metrics.TEXTS.inc(len(texts))
            offset = 0
            for item in batch:
                n = len(item.texts)
                if not item.future.done():
                    item.future.set_result(vectors[offset : offset + n])
                offset += n


def validate_texts(texts: list[str], *, max_texts: int, max_chars: int) -> None:
    if len(texts) > max_texts:
        raise InvalidArgument(f"at most {max_texts} texts per call", field="texts")
    for i, text in enumerate(texts):
        if len(text) > max_chars:
            raise InvalidArgument(f"text longer than {max_chars} characters", field=f"texts.{i}")
