"""gRPC ↔ service conversion only."""

from __future__ import annotations

import grpc

from exocortex.core.repositories.memories import to_proto
from exocortex.ingest.relay import OutboxRelay
from exocortex.ingest.service import IngestService
from exocortex.proto.v1 import ingest_pb2, ingest_pb2_grpc


class IngestServicer(ingest_pb2_grpc.IngestServicer):
    def __init__(self, service: IngestService, relay: OutboxRelay) -> None:
        self._service = service
        self._relay = relay

    async def StoreMemory(
        self, request: ingest_pb2.StoreMemoryRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.StoreMemoryResponse:
        result = await self._service.store(request)
        self._relay.notify()
        response = ingest_pb2.StoreMemoryResponse(
            memory=to_proto(result.memory), dedup_action=result.dedup_action
        )
        if result.matched_id is not None:
            response.matched_id = result.matched_id
        if result.similarity is not None:
            response.dedup_similarity = result.similarity
        return response
