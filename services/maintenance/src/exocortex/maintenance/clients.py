"""The calls this service makes to ingest (storing summaries, alert memories) and retrieval
(searches for the regression check), behind typed methods so no job touches a stub."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from exocortex.core.rpc.errors import from_rpc_error
from exocortex.proto.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    ingest_pb2,
    ingest_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
)

# Searches the regression check runs are marked as its own (no access is counted for them).
REGRESSION_PURPOSE = "retrieval-regression"
RECONCILE_DEADLINE_SECONDS = 1800.0
EXPORT_BATCH = 500


@dataclass(frozen=True, slots=True)
class Stored:
    memory_id: str
    # created | skipped | superseded | merged (ingest's dedup outcome)
    dedup_action: str


class IngestWriter:
    def __init__(self, channel: grpc.aio.Channel, *, timeout: float = 60.0) -> None:
        self._stub = ingest_pb2_grpc.IngestStub(channel)
        self._timeout = timeout

    async def store(
        self,
        *,
        namespace: str,
        content: str,
        content_type: str,
        source: str,
        importance: float,
        tags: Sequence[str],
        metadata: dict[str, Any],
    ) -> Stored:
        """A memory written through the normal write path (stripped, embedded, indexed)."""
        request = ingest_pb2.StoreMemoryRequest(
            namespace=namespace,
            content=content,
            content_type=content_type,
            source=source,
            importance=importance,
            tags=list(tags),
            metadata_json=json.dumps(metadata),
        )
        try:
            reply = await self._stub.StoreMemory(request, timeout=self._timeout)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="ingest") from exc
        return Stored(reply.memory.id, reply.dedup_action or "created")


@dataclass(frozen=True, slots=True)
class Reconciled:
    expected: int
    repaired: dict[str, int]
    seconds: float


class RetrievalAdmin:
    """Retrieval calls beyond nearest neighbours: plain searches (regression check) and the
    projections' reconcile (reindex)."""

    def __init__(self, channel: grpc.aio.Channel, *, timeout: float = 30.0) -> None:
        self._stub = retrieval_pb2_grpc.RetrievalStub(channel)
        self._timeout = timeout

    async def search_ids(
        self,
        query: str,
        *,
        namespace: str,
        limit: int,
        tags: Sequence[str] = (),
        content_type: str | None = None,
        include_metadata: bool = False,
    ) -> list[str]:
        """Ids of the top ``limit`` results, best first (compact: counts no access)."""
        request = retrieval_pb2.SearchRequest(
            query=query,
            namespace=namespace,
            limit=limit,
            tags=list(tags),
            include_metadata=include_metadata,
            compact=True,
            purpose=REGRESSION_PURPOSE,
        )
        if content_type is not None:
            request.content_type = content_type
        try:
            reply = await self._stub.Search(request, timeout=self._timeout)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="retrieval") from exc
        return [r.memory.id for r in reply.results]

    async def reconcile(self) -> Reconciled:
        """Retrieval compares its indexes with Postgres and repairs what differs (a whole
        store's pass may take minutes)."""
        try:
            reply = await self._stub.Reconcile(
                retrieval_pb2.ReconcileRequest(), timeout=RECONCILE_DEADLINE_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="retrieval") from exc
        return Reconciled(reply.expected, dict(reply.repaired), reply.seconds)


class ExportSource:
    """The export, read from retrieval's streaming Export RPC (the one format every backup and
    download shares), as (section, items) batches."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = admin_pb2_grpc.ExportStub(channel)

    async def batches(self, *, embeddings: bool = False) -> AsyncIterator[tuple[str, list[str]]]:
        """Every namespace (backups run with no caller scope, or an unscoped caller's); with
        ``embeddings``, each memory also carries its embedding (base64, in the same snapshot)."""
        request = admin_pb2.ExportRequest(batch_size=EXPORT_BATCH, include_embeddings=embeddings)
        try:
            async for batch in self._stub.ExportData(request):
                yield batch.section, list(batch.items_json)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="retrieval") from exc
