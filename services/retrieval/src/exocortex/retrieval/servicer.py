"""gRPC ↔ service conversion only."""

from __future__ import annotations

import grpc

from exocortex.core.errors import InvalidArgument
from exocortex.core.indexes.base import KeywordIndex, VectorIndex
from exocortex.core.repositories import memories
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval.nearest import nearest
from exocortex.retrieval.reads import ReadService
from exocortex.retrieval.search import ScoredMemory, SearchService
from exocortex.retrieval.waiters import IndexedVersions

MAX_AWAIT_MS = 30_000


def _result(item: ScoredMemory) -> retrieval_pb2.SearchResult:
    fused = item.fused
    return retrieval_pb2.SearchResult(
        memory=memories.to_proto(item.row),
        score=item.score,
        breakdown=retrieval_pb2.ScoreBreakdown(
            fused=fused.score,
            vector=fused.raw_scores.get("vector", 0.0),
            keyword=fused.raw_scores.get("keyword", 0.0),
            vector_rank=fused.ranks.get("vector", 0),
            keyword_rank=fused.ranks.get("keyword", 0),
            metadata_penalty=item.breakdown.get("metadata_penalty", 1.0),
        ),
    )


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(
        self,
        search: SearchService,
        reads: ReadService,
        versions: IndexedVersions,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
    ) -> None:
        self._search = search
        self._reads = reads
        self._versions = versions
        self._vector = vector_index
        self._keyword = keyword_index

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.SearchResponse:
        outcome = await self._search.search(request)
        return retrieval_pb2.SearchResponse(
            results=[_result(r) for r in outcome.results],
            degraded=outcome.degraded,
            mode=outcome.mode,
        )

    async def GetMemories(
        self, request: retrieval_pb2.GetMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.GetMemoriesResponse:
        found, missing = await self._reads.get_memories(list(request.ids))
        return retrieval_pb2.GetMemoriesResponse(
            memories=[memories.to_proto(r) for r in found], missing_ids=missing
        )

    async def AwaitIndexed(
        self, request: retrieval_pb2.AwaitIndexedRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.AwaitIndexedResponse:
        if not 0 <= request.timeout_ms <= MAX_AWAIT_MS:
            raise InvalidArgument(f"timeout_ms must be 0..{MAX_AWAIT_MS}", field="timeout_ms")
        indexed = await self._versions.wait(
            request.memory_id, request.version, request.timeout_ms / 1000.0
        )
        if not indexed:
            # This process may have projected it before a restart: ask the index itself.
            stored = await self._vector.versions([request.memory_id])
            indexed = stored.get(request.memory_id, 0) >= request.version
        return retrieval_pb2.AwaitIndexedResponse(indexed=indexed)

    async def GetIndexStatus(
        self, request: retrieval_pb2.GetIndexStatusRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.IndexStatus:
        return retrieval_pb2.IndexStatus(
            vector_documents=await self._vector.count(),
            keyword_documents=await self._keyword.count(),
            vector_backend=self._vector.name,
            keyword_backend=self._keyword.name,
        )

    async def Nearest(
        self, request: retrieval_pb2.NearestRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.NearestResponse:
        return await nearest(self._vector, request)
