"""Wires the retrieval service: indexes, the projector consumer, search and reads over gRPC."""

from __future__ import annotations

import asyncio
import gc
from contextlib import AsyncExitStack, suppress

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, connect
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import open_pool
from exocortex.core.errors import ExoError
from exocortex.core.logging import get_logger
from exocortex.core.process import serve_metrics
from exocortex.core.rpc.client import open_channel
from exocortex.core.rpc.server import GrpcServer
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.indexes.factory import open_keyword_index, open_vector_index
from exocortex.proto.v1 import admin_pb2_grpc, embedding_pb2, retrieval_pb2_grpc
from exocortex.retrieval import metrics
from exocortex.retrieval.entities import EntityService
from exocortex.retrieval.export import ExportService
from exocortex.retrieval.export_servicer import ExportServicer
from exocortex.retrieval.priority import SearchActivity
from exocortex.retrieval.projector import Projector
from exocortex.retrieval.published import SearchPublisher
from exocortex.retrieval.query_encoder import LocalQueryEncoder, open_query_embedder
from exocortex.retrieval.reads import ReadService
from exocortex.retrieval.reconciler import Reconciler, reconcile_periodically
from exocortex.retrieval.reports import ReportService
from exocortex.retrieval.search import SearchService
from exocortex.retrieval.servicer import RetrievalServicer
from exocortex.retrieval.settings import RetrievalSettings
from exocortex.retrieval.snapshot import SnapshotService
from exocortex.retrieval.waiters import IndexedVersions

log = get_logger(__name__)

GAUGE_INTERVAL_SECONDS = 15.0
UPKEEP_CHECK_SECONDS = 2.0
# The memories the indexes should hold; answered from the partial index
# ix_memories_active_expires_at (migration 0007) instead of reading the whole table.
LIVE_MEMORIES_SQL = (
    "SELECT count(*) AS n FROM memories WHERE is_active "
    "AND (expires_at IS NULL OR expires_at > now())"
)


async def _model_info(embedder: EmbeddingClient, stop: asyncio.Event) -> embedding_pb2.ModelInfo:
    """The index dimension comes from the model, so the two can never disagree."""
    while True:
        try:
            return await embedder.model_info()
        except ExoError as exc:
            if stop.is_set():
                raise
            log.info("waiting for the embedding service", error=exc.message)
            await asyncio.sleep(1.0)


async def _report_gauges(
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
                metrics.CONSUMER_LAG.labels(subjects.RETRIEVAL_PROJECTOR).set(
                    await consumer.pending()
                )
            with suppress(Exception):
                metrics.INDEX_DOCUMENTS.labels("vector").set(await vector_index.count())
                metrics.INDEX_DOCUMENTS.labels("keyword").set(await keyword_index.count())
                async with pool.connection() as conn:
                    cur = await conn.execute(LIVE_MEMORIES_SQL)
                    row = await cur.fetchone()
                metrics.POSTGRES_MEMORIES.labels("indexable").set(row["n"] if row else 0)
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


async def run(settings: RetrievalSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        # Listening before Postgres and the embedding service are reached: meanwhile health
        # says NOT_SERVING ("starting").
        server = GrpcServer("retrieval", settings.listen)
        await server.listen()
        stack.push_async_callback(server.stop, 0)
        pool = await open_pool(settings.database_url, max_size=settings.db_pool_size)
        stack.push_async_callback(pool.close)
        # Searches only read, one statement per connection use: without transactions each use
        # is one round trip instead of three (BEGIN, the query, COMMIT).
        read_pool = await open_pool(
            settings.database_url, max_size=settings.db_pool_size, name="search", autocommit=True
        )
        stack.push_async_callback(read_pool.close)
        channel = open_channel(settings.embedding_addr)
        stack.push_async_callback(channel.close)
        embedder = EmbeddingClient(channel, timeout=10.0)
        model = await _model_info(embedder, stop)
        dim = model.dimensions
        query_embedder = await open_query_embedder(
            settings.query_encoder,
            embedder,
            fingerprint=model.fingerprint,
            model_path=settings.embedding_model_path,
            cache_dir=settings.embedding_cache_dir or settings.data_dir / "models",
            threads=settings.query_encoder_threads,
            precision=settings.query_encoder_precision,
        )
        if isinstance(query_embedder, LocalQueryEncoder):
            stack.callback(query_embedder.close)

        vector_index = await open_vector_index(
            qdrant_url=settings.qdrant_url,
            qdrant_api_key=settings.qdrant_api_key,
            data_dir=settings.data_dir / "indexes",
            dim=dim,
        )
        stack.push_async_callback(vector_index.close)
        keyword_index = await open_keyword_index(
            meili_url=settings.meili_url,
            meili_api_key=settings.meili_master_key,
            data_dir=settings.data_dir / "indexes",
        )
        stack.push_async_callback(keyword_index.close)
        log.info("indexes open", vector=vector_index.name, keyword=keyword_index.name)

        versions = IndexedVersions()
        activity = SearchActivity(
            quiet=settings.background_quiet_seconds, max_wait=settings.background_max_wait_seconds
        )
        projector = Projector(pool, vector_index, keyword_index, versions)
        nc = await connect(settings.nats_url, name="retrieval")
        stack.push_async_callback(nc.drain)
        consumer = DurableConsumer(
            nc.jetstream(),
            durable=subjects.RETRIEVAL_PROJECTOR,
            filter_subject=subjects.MEMORY_ALL,
            handler=projector.handle,
            batch_size=settings.projector_batch,
            fetch_timeout=0.25,
        )
        settings_cache = SettingsCache(pool)
        search = SearchService(
            read_pool,
            query_embedder,
            vector_index,
            keyword_index,
            settings_cache,
            overfetch_factor=settings.overfetch_factor,
            min_candidates=settings.min_candidates,
            listener=SearchPublisher(nc),
            activity=activity,
        )
        server.register(
            retrieval_pb2_grpc.add_RetrievalServicer_to_server,
            RetrievalServicer(
                search,
                ReadService(pool),
                versions,
                vector_index,
                keyword_index,
                entities=EntityService(pool),
                reports=ReportService(pool),
                settings=settings_cache,
                snapshot=SnapshotService(search, pool),
            ),
        )
        server.register(
            admin_pb2_grpc.add_ExportServicer_to_server, ExportServicer(ExportService(pool))
        )
        serve_metrics(settings.metrics_port, settings.metrics_host)
        await server.start(["exocortex.v1.Retrieval", "exocortex.v1.Export"])
        # What start-up built (indexes, model, clients) lives as long as the process: frozen out
        # of the collector, so full collections on the search path do not walk it each time.
        gc.collect()
        gc.freeze()
        tasks = [
            asyncio.create_task(consumer.run(stop), name="projector"),
            asyncio.create_task(
                _report_gauges(consumer, vector_index, keyword_index, settings, stop),
                name="gauges",
            ),
            asyncio.create_task(
                maintain_vector_index(vector_index, stop, settings.vector_flush_max_age_seconds),
                name="vector-index-upkeep",
            ),
            asyncio.create_task(
                reconcile_periodically(
                    Reconciler(
                        pool, projector, vector_index, keyword_index, backlog=consumer.pending
                    ),
                    settings.reconcile_interval_seconds,
                    stop,
                ),
                name="reconciler",
            ),
        ]
        await stop.wait()
        await server.stop(settings.shutdown_grace_seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
