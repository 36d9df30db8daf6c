"""The shared frame of the background workers (enrichment, maintenance): a Postgres pool, a
NATS connection and a gRPC server with health, all owned by one exit stack."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

import grpc
import psycopg
from nats.aio.client import Client as NatsClient
from psycopg_pool import AsyncConnectionPool

from exocortex.core.bus.client import connect
from exocortex.core.config import GrpcServiceSettings
from exocortex.core.db.pool import open_pool
from exocortex.core.process import serve_metrics
from exocortex.core.rpc.server import GrpcServer

Row = dict[str, Any]


@dataclass
class WorkerResources:
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]
    nats: NatsClient
    server: GrpcServer


async def open_worker(
    stack: AsyncExitStack,
    name: str,
    settings: GrpcServiceSettings,
    servicers: Sequence[tuple[Callable[[Any, grpc.aio.Server], None], Any, str]] = (),
) -> WorkerResources:
    server = GrpcServer(name, settings.listen)
    for add_fn, servicer, _ in servicers:
        server.register(add_fn, servicer)
    # Listening before Postgres is reached: meanwhile health says NOT_SERVING ("starting").
    await server.listen()
    stack.push_async_callback(server.stop, 0)
    pool = await open_pool(settings.database_url, max_size=4)
    stack.push_async_callback(pool.close)
    nc = await connect(settings.nats_url, name=name)
    stack.push_async_callback(nc.drain)
    serve_metrics(settings.metrics_port, settings.metrics_host)
    await server.start([full_name for _, _, full_name in servicers])
    # Stopped before the pool and NATS close, so calls in flight finish with them (the stop
    # pushed above then does nothing).
    stack.push_async_callback(server.stop, settings.shutdown_grace_seconds)
    return WorkerResources(pool=pool, nats=nc, server=server)
