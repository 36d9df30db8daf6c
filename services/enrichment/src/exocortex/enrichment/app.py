"""Wires the enrichment service: a durable JetStream consumer on memory events that enriches
stored and changed memories (entities, relationships, related links, contradiction candidates,
goal links), plus health and metrics."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.bus import settings_changes, subjects
from exocortex.core.bus.client import DurableConsumer
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import RetrievalClient
from exocortex.core.logging import get_logger
from exocortex.core.rpc.client import open_channel
from exocortex.core.settings_cache import SettingsCache
from exocortex.core.worker import open_worker
from exocortex.enrichment import events
from exocortex.enrichment.service import Enricher
from exocortex.enrichment.settings import EnrichmentSettings

log = get_logger(__name__)


async def run(settings: EnrichmentSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        worker = await open_worker(stack, "enrichment", settings)
        retrieval_channel = open_channel(settings.retrieval_addr)
        stack.push_async_callback(retrieval_channel.close)
        embedding_channel = open_channel(settings.embedding_addr)
        stack.push_async_callback(embedding_channel.close)
        settings_cache = SettingsCache(worker.pool)
        await settings_changes.follow(worker.nats, settings_cache, "enrichment")
        enricher = Enricher(
            worker.pool,
            RetrievalClient(retrieval_channel, timeout=10.0),
            EmbeddingClient(embedding_channel),
            settings_cache,
        )

        consumer = DurableConsumer(
            worker.nats.jetstream(),
            durable=subjects.ENRICHMENT_WORKER,
            filter_subject=subjects.MEMORY_ALL,
            handler=events.handler(enricher.handle),
            batch_size=settings.batch_size,
            fetch_timeout=0.5,
            # A trickle of stores is enriched in batches (one nearest-neighbour call, one
            # transaction, one outbox batch each) rather than one memory at a time.
            linger=settings.linger_seconds,
            max_linger=settings.max_linger_seconds,
        )
        task = asyncio.create_task(consumer.run(stop), name="enrichment-consumer")
        log.info("enrichment ready")
        await stop.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
