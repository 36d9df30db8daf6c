"""Background upkeep beside the projector: the gauges of what the indexes hold, and the embedded
vector engine's flushes and optimizations, run while searches pause."""

from __future__ import annotations

import asyncio
from contextlib import suppress

from exocortex.core.bus.client import DurableConsumer
from exocortex.core.db.pool import open_pool
from exocortex.core.logging import get_logger
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.retrieval import metrics
from exocortex.retrieval.projection import repository
from exocortex.retrieval.settings import RetrievalSettings

log = get_logger(__name__)

GAUGE_INTERVAL_SECONDS = 15.0
UPKEEP_CHECK_SECONDS = 2.0


async def report_gauges(
    consumer: DurableConsumer,
    vector_index: VectorIndex,
    keyword_index: KeywordIndex,
    settings: RetrievalSettings,
    stop: asyncio.Event,
) -> None:
    pool = await open_pool(settings.database_url, max_size=1)
    try:
        while not stop.is_set():
            with suppress(Exception):
                metrics.CONSUMER_LAG.labels(consumer.durable).set(await consumer.pending())
            with suppress(Exception):
                metrics.INDEX_DOCUMENTS.labels("vector").set(await vector_index.count())
                metrics.INDEX_DOCUMENTS.labels("keyword").set(await keyword_index.count())
                live = await repository.live_memories(pool)
                metrics.POSTGRES_MEMORIES.labels("indexable").set(live)
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), GAUGE_INTERVAL_SECONDS)
    finally:
        await pool.close()


async def maintain_vector_index(
    vector_index: VectorIndex, stop: asyncio.Event, flush_max_age: float
) -> None:
    """Embedded vector engines block searches while they flush or build their graph, so both
    wait for searches to pause (see the adapter): flushing what the projector wrote (applied
    writes already survive a crash of this process; a flush puts them in the segments, at the
    latest `flush_max_age` seconds after the first), and indexing points that piled up."""
    flush = getattr(vector_index, "flush_when_idle", None)
    optimize = getattr(vector_index, "optimize_when_idle", None)
    if flush is None and optimize is None:
        return  # an index server: every write is already durable and indexed by the server
    while not stop.is_set():
        try:
            if flush is not None:
                await flush(flush_max_age)
            if optimize is not None and await optimize():
                log.info("vector index optimized while searches were idle")
        except Exception as exc:
            log.warning("vector index upkeep failed", error=str(exc))
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), UPKEEP_CHECK_SECONDS)
