"""Connections the gateway holds for its lifetime: gRPC channels to the services, and light
probes of Postgres and NATS for /health. The gateway owns no data."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any

import grpc
import psycopg
from nats.aio.client import Client as NatsClient

from exocortex.core.bus.client import connect
from exocortex.core.rpc.client import Serving, check_health, open_channel
from exocortex.gateway.settings import GatewaySettings
from exocortex.proto.v1 import (
    admin_pb2_grpc,
    entities_pb2_grpc,
    goals_pb2_grpc,
    ingest_pb2_grpc,
    retrieval_pb2_grpc,
)

SERVICES = ("embedding", "ingest", "retrieval", "enrichment", "maintenance")
PROBE_TIMEOUT_SECONDS = 2.0


@dataclass
class Backends:
    settings: GatewaySettings
    channels: dict[str, grpc.aio.Channel]
    nats: NatsClient
    ingest: ingest_pb2_grpc.IngestStub
    retrieval: retrieval_pb2_grpc.RetrievalStub
    goals: goals_pb2_grpc.GoalsStub
    entity_admin: entities_pb2_grpc.EntityAdminStub
    admin: admin_pb2_grpc.AdminStub
    export: admin_pb2_grpc.ExportStub
    started: float = field(default_factory=time.monotonic)
    # One connection kept for the Postgres probe: a new connection per /health (TCP, auth,
    # backend start) cost ten times the query.
    _probe: psycopg.AsyncConnection[Any] | None = field(default=None, init=False, repr=False)

    async def _postgres(self) -> tuple[bool, str | None]:
        try:
            if self._probe is None or self._probe.closed:
                self._probe = await psycopg.AsyncConnection.connect(
                    self.settings.database_url,
                    connect_timeout=int(PROBE_TIMEOUT_SECONDS),
                    autocommit=True,
                )
            await asyncio.wait_for(self._probe.execute("SELECT 1"), PROBE_TIMEOUT_SECONDS)
            return True, None
        except Exception as exc:
            # A broken or stuck connection is dropped; the next probe connects afresh.
            await self.close_probe()
            return False, type(exc).__name__

    async def close_probe(self) -> None:
        probe, self._probe = self._probe, None
        if probe is not None:
            with suppress(Exception):
                await probe.close()

    async def check(self) -> dict[str, tuple[Serving, str | None]]:
        """Probe every dependency concurrently, each with a short timeout."""

        async def postgres() -> tuple[Serving, str | None]:
            ok, detail = await self._postgres()
            return ("ok" if ok else "down"), detail

        async def nats() -> tuple[Serving, str | None]:
            return ("ok", None) if self.nats.is_connected else ("down", "not connected")

        async def service(name: str) -> tuple[Serving, str | None]:
            state = await check_health(self.channels[name], deadline_seconds=1.0)
            detail = {"ok": None, "starting": "not serving yet", "down": "not reachable"}
            return state, detail[state]

        names = ["postgres", "nats", *SERVICES]
        results = await asyncio.gather(postgres(), nats(), *(service(n) for n in SERVICES))
        return dict(zip(names, results, strict=True))


async def open_backends(stack: AsyncExitStack, settings: GatewaySettings) -> Backends:
    addrs = {
        "embedding": settings.embedding_addr,
        "ingest": settings.ingest_addr,
        "retrieval": settings.retrieval_addr,
        "enrichment": settings.enrichment_addr,
        "maintenance": settings.maintenance_addr,
    }
    channels = {name: open_channel(addr) for name, addr in addrs.items()}
    for channel in channels.values():
        stack.push_async_callback(channel.close)
    nc = await connect(settings.nats_url, name="gateway")
    stack.push_async_callback(nc.close)
    backends = Backends(
        settings=settings,
        channels=channels,
        nats=nc,
        ingest=ingest_pb2_grpc.IngestStub(channels["ingest"]),
        retrieval=retrieval_pb2_grpc.RetrievalStub(channels["retrieval"]),
        goals=goals_pb2_grpc.GoalsStub(channels["ingest"]),
        entity_admin=entities_pb2_grpc.EntityAdminStub(channels["ingest"]),
        admin=admin_pb2_grpc.AdminStub(channels["ingest"]),
        export=admin_pb2_grpc.ExportStub(channels["retrieval"]),
    )
    stack.push_async_callback(backends.close_probe)
    return backends
