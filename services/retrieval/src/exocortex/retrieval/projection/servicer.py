"""gRPC ↔ projection: the AwaitIndexed and GetIndexStatus RPCs (conversion only)."""

from __future__ import annotations

import grpc

from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval.projection.service import IndexService


class ProjectionServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(self, indexes: IndexService) -> None:
        self._indexes = indexes

    async def AwaitIndexed(
        self, request: retrieval_pb2.AwaitIndexedRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.AwaitIndexedResponse:
        if request.memory_ids:
            indexed = await self._indexes.await_all_indexed(
                list(request.memory_ids), request.version, request.timeout_ms
            )
        else:
            indexed = await self._indexes.await_indexed(
                request.memory_id, request.version, request.timeout_ms, by_event=request.by_event
            )
        return retrieval_pb2.AwaitIndexedResponse(indexed=indexed)

    async def GetIndexStatus(
        self, request: retrieval_pb2.GetIndexStatusRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.IndexStatus:
        status = await self._indexes.status()
        return retrieval_pb2.IndexStatus(
            vector_documents=status.vector_documents,
            keyword_documents=status.keyword_documents,
            vector_backend=status.vector_backend,
            keyword_backend=status.keyword_backend,
        )

    async def Reconcile(
        self, request: retrieval_pb2.ReconcileRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ReconcileReply:
        report = await self._indexes.reconcile()
        return retrieval_pb2.ReconcileReply(
            expected=report.expected,
            repaired={f"{kind}/{reason}": n for (kind, reason), n in report.repaired.items()},
            seconds=report.seconds,
        )
