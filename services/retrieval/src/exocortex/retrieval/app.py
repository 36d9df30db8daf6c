"""Wires the retrieval service: indexes, the projector consumer, search and reads over gRPC."""

from __future__ import annotations

import asyncio
import gc
from contextlib import AsyncExitStack

from exocortex.core.bus import settings_changes, subjects
from exocortex.core.bus.client import DurableConsumer, connect
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import open_pool
from exocortex.core.errors import ExoError
from exocortex.core.logging import get_logger
from exocortex.core.process import serve_metrics
from exocortex.core.rpc.client import open_channel
from exocortex.core.rpc.server import GrpcServer
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.factory import open_keyword_index, open_vector_index
from exocortex.indexes.shared_commits import SharedCommits
from exocortex.indexes.tantivy_index import TantivyKeywordIndex
from exocortex.proto.v1 import admin_pb2_grpc, embedding_pb2, retrieval_pb2_grpc
from exocortex.retrieval.projection.ahead import ProjectionAhead
from exocortex.retrieval.projection.events import IndexedAnnouncements, MemoryEvents
from exocortex.retrieval.projection.projector import Projector
from exocortex.retrieval.projection.reconciler import Reconciler, reconcile_periodically
from exocortex.retrieval.projection.service import IndexService
from exocortex.retrieval.projection.upkeep import maintain_vector_index, report_gauges
from exocortex.retrieval.projection.waiters import IndexedVersions
from exocortex.retrieval.reads.entities import EntityService
from exocortex.retrieval.reads.export import ExportService
from exocortex.retrieval.reads.export_servicer import ExportServicer
from exocortex.retrieval.reads.reports import ReportService
from exocortex.retrieval.reads.service import ReadService
from exocortex.retrieval.reads.snapshot import SnapshotService
from exocortex.retrieval.search.events import SearchPublisher
from exocortex.retrieval.search.priority import SearchActivity
from exocortex.retrieval.search.query_encoder import LocalQueryEncoder, open_query_embedder
from exocortex.retrieval.search.service import SearchService
from exocortex.retrieval.servicer import RetrievalServicer
from exocortex.retrieval.settings import RetrievalSettings

log = get_logger(__name__)


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
        # The embedded keyword engine opens in one process only: with it this process is the
        # only replica, the only writer and the only searcher of the indexes.
        sole_replica = keyword_index.name == TantivyKeywordIndex.name
        shared_commits = sole_replica and settings.keyword_commit_delay_seconds > 0
        if shared_commits:
            # Only this process writes and searches the embedded engine, so a search can
            # commit what it must see itself (see shared_commits).
            keyword_index = SharedCommits(
                keyword_index, delay=settings.keyword_commit_delay_seconds
            )
        stack.push_async_callback(keyword_index.close)
        log.info("indexes open", vector=vector_index.name, keyword=keyword_index.name)

        versions = IndexedVersions()
        activity = SearchActivity(
            quiet=settings.background_quiet_seconds, max_wait=settings.background_max_wait_seconds
        )
        nc = await connect(settings.nats_url, name="retrieval")
        stack.push_async_callback(nc.drain)
        # Replicas on the same index servers share the durable, so the one asked to await a
        # memory may not be the one that applied it: what each applies is announced to all.
        # A lone replica's announcement would reach nobody (docs/scaling.md).
        announce = None
        if not sole_replica:
            announcements = IndexedAnnouncements(
                nc, subjects.indexed_subject(settings.projector_durable), versions
            )
            await announcements.listen()
            announce = announcements.announce
        projector = Projector(pool, vector_index, keyword_index, versions, announce=announce)
        consumer = DurableConsumer(
            nc.jetstream(),
            durable=settings.projector_durable,
            filter_subject=subjects.MEMORY_ALL,
            handler=MemoryEvents(projector).handle,
            batch_size=settings.projector_batch,
            fetch_timeout=0.25,
            # Batches waiting for a shared commit leave the consumer free to take the next.
            max_in_flight=settings.projector_in_flight if shared_commits else 1,
        )
        reconciler = Reconciler(
            pool, projector, vector_index, keyword_index, backlog=consumer.pending
        )
        ahead = None
        if shared_commits and settings.project_ahead:
            # This process alone writes the embedded engines: a memory someone waits for is
            # projected at once, ahead of its event (see projection.ahead).
            ahead = ProjectionAhead(projector)
            stack.push_async_callback(ahead.close)
        settings_cache = SettingsCache(pool)
        await settings_changes.follow(nc, settings_cache, "retrieval")
        search = SearchService(
            read_pool,
            query_embedder,
            vector_index,
            keyword_index,
            settings_cache,
            overfetch_factor=settings.overfetch_factor,
            min_candidates=settings.min_candidates,
            token_cache_bytes=settings.token_cache_mb * 2**20,
            vector_cache_bytes=settings.vector_cache_mb * 2**20,
            listener=SearchPublisher(nc),
            activity=activity,
        )
        server.register(
            retrieval_pb2_grpc.add_RetrievalServicer_to_server,
            RetrievalServicer(
                search=search,
                vector_index=vector_index,
                reads=ReadService(pool),
                snapshot=SnapshotService(search, pool),
                settings=settings_cache,
                entities=EntityService(pool),
                reports=ReportService(pool),
                indexes=IndexService(
                    versions, vector_index, keyword_index, reconciler, ahead=ahead
                ),
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
                report_gauges(consumer, vector_index, keyword_index, settings, stop),
                name="gauges",
            ),
            asyncio.create_task(
                maintain_vector_index(vector_index, stop, settings.vector_flush_max_age_seconds),
                name="vector-index-upkeep",
            ),
            asyncio.create_task(
                reconcile_periodically(
                    reconciler,
                    settings.reconcile_interval_seconds,
                    stop,
                    # One run per interval for all replicas on the same indexes (one durable).
                    turn=f"retrieval-reconciler:{settings.projector_durable}",
                ),
                name="reconciler",
            ),
        ]
        await stop.wait()
        await server.stop(settings.shutdown_grace_seconds)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
