"""The micro-batcher in front of the encoder."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.embedding import metrics
from exocortex.encoders import Encoder

log = get_logger(__name__)

Tokens = npt.NDArray[np.float32]
# The lanes a text waits in: search queries, single writes' passages, and bulk passages (an
# import's batches, restores, backfills, enrichment's own texts).
QUERY, PASSAGE, BULK = 0, 1, 2

# What a batch answers: the vectors, and the token vectors when any request in it asked for them
# and the encoder can give them (from the same run of the model).
_Answer = tuple[list[Vector], list[Tokens] | None]


@dataclass
class _Pending:
    texts: list[str]
    future: asyncio.Future[_Answer] = field(repr=False)
    tokens: bool = False


class MicroBatcher:
    """Merges concurrent embed calls into one model call: many small requests (one query each)
    cost about as much as one batch, which is what keeps throughput up under load.

    Queries (``QUERY``), single writes' passages (``PASSAGE``) and bulk passages (``BULK``)
    wait in separate lanes. When the encoder can run calls at once (ONNX Runtime can), each
    lane has its own model threads, so neither a search's query nor a store's text waits for
    an import's batches: the bulk lane runs one batch at a time (its runs go side by side on
    the shared run threads, so one batch keeps the cores busy), and a store's text runs beside
    it. Otherwise the lanes share one thread and a text only waits for the batch already
    running (each lane hands that thread one batch at a time). ``query_model`` makes the encoder
    the query lane runs instead (at its first query; see encoder.query_encoder_factory).

    ``passage_calls`` passage batches may run at once (where the encoder takes concurrent
    calls): single stores arriving one by one are lone texts, each run on one thread, so a
    second one runs beside the first rather than behind it. A new batch is gathered only once
    a call is free, so what arrives while they run is taken together."""

    def __init__(
        self,
        model: Encoder,
        *,
        max_batch: int,
        max_wait_ms: float,
        query_model: Callable[[], Encoder] | None = None,
        passage_calls: int = 1,
    ) -> None:
        self._model = model
        self._make_query_model = query_model
        self._max_batch = max_batch
        max_wait = max_wait_ms / 1000.0
        self._arrivals = itertools.count()
        shared = None
        calls = max(1, passage_calls)
        if not model.concurrent_calls:
            shared = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
            calls = 1
        # Only passages wait a little for company; a query that waits is a slower search.
        self._lanes = {
            QUERY: _Lane(shared or ThreadPoolExecutor(1, thread_name_prefix="embed-query"), 0.0),
            PASSAGE: _Lane(
                shared or ThreadPoolExecutor(calls, thread_name_prefix="embed-passage"),
                max_wait,
                model,
                calls=calls,
            ),
            BULK: _Lane(
                shared or ThreadPoolExecutor(1, thread_name_prefix="embed-bulk"), max_wait, model
            ),
        }
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(lane), name=f"embedding-batcher-{priority}")
            for priority, lane in self._lanes.items()
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with suppress(asyncio.CancelledError):
                await task
        for lane in self._lanes.values():
            lane.executor.shutdown(wait=False, cancel_futures=True)

    async def embed(self, texts: list[str], *, priority: int = PASSAGE) -> list[Vector]:
        return (await self._embed(texts, priority, tokens=False))[0]

    async def embed_with_tokens(
        self, texts: list[str], *, priority: int = PASSAGE
    ) -> tuple[list[Vector], list[Tokens] | None]:
        """The vectors and each text's token vectors from the same run of the model (None when
        the encoder cannot give token vectors)."""
        return await self._embed(texts, priority, tokens=True)

    async def _embed(self, texts: list[str], priority: int, *, tokens: bool) -> _Answer:
        if not texts:
            return [], [] if tokens else None
        lane = self._lanes.get(priority, self._lanes[PASSAGE])
        # A large request is queued in max_batch slices, so it cannot hold the model for long.
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[_Answer]] = []
        for start in range(0, len(texts), self._max_batch):
            future: asyncio.Future[_Answer] = loop.create_future()
            pending = _Pending(texts[start : start + self._max_batch], future, tokens)
            await lane.queue.put((next(self._arrivals), pending))
            futures.append(future)
        parts = await asyncio.gather(*futures)
        vectors = [v for part, _ in parts for v in part]
        if not tokens or any(t is None for _, t in parts):
            return vectors, None
        return vectors, [t for _, part in parts for t in part or []]

    async def _lane_model(self, lane: _Lane) -> Encoder:
        """The encoder ``lane`` runs: the query lane's own is made at its first batch, on the
        lane's thread; should that fail, the lane runs the service's model."""
        if lane.model is None:
            lane.model = self._model
            if self._make_query_model is not None:
                loop = asyncio.get_running_loop()
                try:
                    lane.model = await loop.run_in_executor(lane.executor, self._make_query_model)
                    log.info("query encoder ready", encoder=type(lane.model).__name__)
                except Exception as exc:
                    log.warning("no encoder of its own for queries", error=str(exc))
        return lane.model

    async def _loop(self, lane: _Lane) -> None:
        loop = asyncio.get_running_loop()
        free = asyncio.Semaphore(lane.calls)
        running: set[asyncio.Task[None]] = set()

        def done(task: asyncio.Task[None]) -> None:
            running.discard(task)
            free.release()

        try:
            while True:
                await free.acquire()
                _, first = await lane.queue.get()
                model = await self._lane_model(lane)
                batch = [first]
                size = len(first.texts)
                # Whatever is already waiting joins at once.
                while size < self._max_batch and not lane.queue.empty():
                    _, item = lane.queue.get_nowait()
                    batch.append(item)
                    size += len(item.texts)
                deadline = loop.time() + lane.max_wait
                while size < self._max_batch:
                    timeout = deadline - loop.time()
                    if timeout <= 0:
                        break
                    try:
                        _, item = await asyncio.wait_for(lane.queue.get(), timeout)
                    except TimeoutError:
                        break
                    batch.append(item)
                    size += len(item.texts)
                task = asyncio.create_task(self._run(lane, model, batch))
                running.add(task)
                task.add_done_callback(done)
        finally:
            for task in running:
                task.cancel()

    async def _run(self, lane: _Lane, model: Encoder, batch: list[_Pending]) -> None:
        """One call of the model for ``batch``; each request gets its share of the answer."""
        loop = asyncio.get_running_loop()
        texts = [t for item in batch for t in item.texts]
        start = time.perf_counter()
        # One run of the model either way: the token vectors are what it pools.
        with_tokens = getattr(model, "encode_with_tokens", None)
        if not any(item.tokens for item in batch):
            with_tokens = None
        tokens: list[Tokens] | None = None
        try:
            if with_tokens is not None:
                vectors, tokens = await loop.run_in_executor(lane.executor, with_tokens, texts)
            else:
                vectors = await loop.run_in_executor(lane.executor, model.encode, texts)
        except Exception as exc:
            for item in batch:
                if not item.future.done():
                    item.future.set_exception(exc)
            return
        metrics.DURATION.observe(time.perf_counter() - start)
        metrics.BATCH_SIZE.observe(len(texts))
        metrics.TEXTS.inc(len(texts))
        offset = 0
        for item in batch:
            n = len(item.texts)
            if not item.future.done():
                mine = tokens[offset : offset + n] if tokens is not None else None
                item.future.set_result(
                    (vectors[offset : offset + n], mine if item.tokens else None)
                )
            offset += n


@dataclass
class _Lane:
    executor: ThreadPoolExecutor
    max_wait: float
    # The encoder it runs (None: not chosen yet, see MicroBatcher._lane_model).
    model: Encoder | None = None
    # How many of its batches may run at once.
    calls: int = 1
    queue: asyncio.Queue[tuple[int, _Pending]] = field(default_factory=asyncio.Queue)


def validate_texts(texts: list[str], *, max_texts: int, max_chars: int) -> None:
    if len(texts) > max_texts:
        raise InvalidArgument(f"at most {max_texts} texts per call", field="texts")
    for i, text in enumerate(texts):
        if len(text) > max_chars:
            raise InvalidArgument(f"text longer than {max_chars} characters", field=f"texts.{i}")
