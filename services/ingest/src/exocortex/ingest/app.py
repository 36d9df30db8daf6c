"""Wires the ingest service: Postgres pool, embedding client, NATS, outbox relay, gRPC."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from exocortex.core.bus import settings_changes
from exocortex.core.bus.client import connect, ensure_stream
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import RetrievalClient
from exocortex.core.db.pool import open_pool
from exocortex.core.logging import get_logger
from exocortex.core.process import serve_metrics
from exocortex.core.rpc.client import open_channel
from exocortex.core.rpc.server import GrpcServer
from exocortex.core.settings_cache import SettingsCache
from exocortex.ingest.events import OutboxRelay
from exocortex.ingest.files.service import FileIngest
from exocortex.ingest.goals.service import GoalService
from exocortex.ingest.goals.servicer import GoalsServicer
from exocortex.ingest.servicer import IngestServicer
from exocortex.ingest.settings import IngestSettings
from exocortex.ingest.store.bulk_import import BulkImporter
from exocortex.ingest.store.service import StoreService
from exocortex.ingest.update.admin import AdminService
from exocortex.ingest.update.entities import EntityService
from exocortex.ingest.update.service import UpdateService
from exocortex.ingest.update.servicer import AdminServicer, EntityAdminServicer
from exocortex.proto.v1 import admin_pb2_grpc, entities_pb2_grpc, goals_pb2_grpc, ingest_pb2_grpc

log = get_logger(__name__)


async def run(settings: IngestSettings, stop: asyncio.Event) -> None:
    async with AsyncExitStack() as stack:
        # Listening before Postgres is reached: meanwhile health says NOT_SERVING ("starting").
        server = GrpcServer("ingest", settings.listen)
        await server.listen()
        stack.push_async_callback(server.stop, 0)
        pool = await open_pool(settings.database_url, max_size=settings.db_pool_size)
        stack.push_async_callback(pool.close)
        channel = open_channel(settings.embedding_addr)
        stack.push_async_callback(channel.close)
        retrieval_channel = open_channel(settings.retrieval_addr)
        stack.push_async_callback(retrieval_channel.close)
        nc = await connect(settings.nats_url, name="ingest")
        stack.push_async_callback(nc.drain)
        js = nc.jetstream()
        try:
            await asyncio.wait_for(ensure_stream(js), timeout=5)
        except Exception as exc:  # NATS may come later; the relay retries.
            log.warning("could not declare the event stream yet", error=str(exc))

        relay = OutboxRelay(
            pool,
            js,
            settings.database_url,
            poll_seconds=settings.relay_poll_seconds,
            batch=settings.relay_batch,
        )
        relay_task = asyncio.create_task(relay.run(stop), name="outbox-relay")

        settings_cache = SettingsCache(pool)
        await settings_changes.follow(nc, settings_cache, "ingest")
        store = StoreService(
            pool,
            EmbeddingClient(channel),
            RetrievalClient(retrieval_channel, timeout=settings.nearest_timeout_seconds),
            settings_cache,
            max_content_chars=settings.max_content_chars,
            default_attribution=settings.default_attribution(),
            on_commit=relay.notify,
        )

        updates = UpdateService(store)
        files = FileIngest(store, updates, import_root=settings.import_root)
        server.register(
            ingest_pb2_grpc.add_IngestServicer_to_server,
            IngestServicer(pool, store, updates, BulkImporter(store), files, relay.notify),
        )
        server.register(
            goals_pb2_grpc.add_GoalsServicer_to_server,
            GoalsServicer(GoalService(pool, store), relay.notify),
        )
        server.register(
            entities_pb2_grpc.add_EntityAdminServicer_to_server,
            EntityAdminServicer(EntityService(pool)),
        )
        server.register(
            admin_pb2_grpc.add_AdminServicer_to_server,
            AdminServicer(AdminService(pool, settings_cache.changed)),
        )
        serve_metrics(settings.metrics_port, settings.metrics_host)
        await server.start(
            [
                "exocortex.v1.Ingest",
                "exocortex.v1.Goals",
                "exocortex.v1.EntityAdmin",
                "exocortex.v1.Admin",
            ]
        )
        await stop.wait()
        await server.stop(settings.shutdown_grace_seconds)
        await relay_task
