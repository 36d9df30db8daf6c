"""gRPC ↔ store service conversion only: StoreMemory and ImportMemories."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC

import grpc

from exocortex.core.records import ATTRIBUTION_FIELDS, Attribution
from exocortex.core.rpc.records import memory_to_proto
from exocortex.ingest.store.bulk_import import BulkImporter
from exocortex.ingest.store.model import MemoryInput, StoreResult
from exocortex.ingest.store.service import StoreService
from exocortex.proto.v1 import common_pb2, ingest_pb2


def attribution_of(message: common_pb2.Attribution) -> Attribution:
    """The fields the caller set (an unset field stays None)."""
    return Attribution(
        **{k: getattr(message, k) for k in ATTRIBUTION_FIELDS if message.HasField(k)}
    )


def memory_input(request: ingest_pb2.StoreMemoryRequest) -> MemoryInput:
    return MemoryInput(
        content=request.content,
        namespace=request.namespace,
        content_type=request.content_type if request.HasField("content_type") else None,
        source=request.source if request.HasField("source") else None,
        source_uri=request.source_uri if request.HasField("source_uri") else None,
        tags=tuple(request.tags),
        importance=request.importance if request.HasField("importance") else None,
        valence=request.valence if request.HasField("valence") else None,
        metadata_json=request.metadata_json,
        attribution=attribution_of(request.attribution),
        is_metadata=request.is_metadata if request.HasField("is_metadata") else None,
        expires_at=request.expires_at.ToDatetime(tzinfo=UTC)
        if request.HasField("expires_at")
        else None,
        benchmark=request.benchmark,
        parent_id=request.parent_id if request.HasField("parent_id") else None,
    )


def stored_proto(result: StoreResult) -> ingest_pb2.StoreMemoryResponse:
    response = ingest_pb2.StoreMemoryResponse(
        memory=memory_to_proto(result.memory), dedup_action=result.dedup_action
    )
    if result.matched_id is not None:
        response.matched_id = result.matched_id
    if result.similarity is not None:
        response.dedup_similarity = result.similarity
    return response


class StoreRpcs:
    """The store RPCs of the Ingest service (joined into one servicer in ``ingest.servicer``)."""

    _store: StoreService
    _importer: BulkImporter
    # Wakes the outbox relay once a write is committed.
    _notify: Callable[[], None]

    async def StoreMemory(
        self, request: ingest_pb2.StoreMemoryRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.StoreMemoryResponse:
        # No wake-up here: a new memory's commit wakes the relay itself (GroupCommitter), and
        # every other outcome commits its event with a notification (events.emit). A second
        # wake-up after the first drain began cost one more drain, of an empty outbox.
        result = await self._store.store(memory_input(request))
        return stored_proto(result)

    async def ImportMemories(
        self, request: ingest_pb2.ImportMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.ImportMemoriesResponse:
        results = await self._importer.run([memory_input(m) for m in request.memories])
        self._notify()
        failed = sum(1 for r in results if r.dedup_action == "failed")
        return ingest_pb2.ImportMemoriesResponse(
            imported=len(results) - failed,
            failed=failed,
            results=[
                ingest_pb2.ImportItemResult(
                    index=r.index,
                    dedup_action=r.dedup_action,
                    id=r.id,
                    error=r.error,
                    field=r.field,
                )
                for r in results
            ],
        )
