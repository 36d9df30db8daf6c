"""gRPC ↔ search: the Search, ContextGraph and Nearest RPCs (conversion only)."""

from __future__ import annotations

import grpc

from exocortex.core.domain.vectors import from_bytes
from exocortex.core.errors import InvalidArgument
from exocortex.core.rpc.timestamps import from_field
from exocortex.indexes.base import VectorIndex
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval import converters
from exocortex.retrieval.search.nearest import NearestProbe, NearestQuery, nearest
from exocortex.retrieval.search.query import SearchQuery
from exocortex.retrieval.search.service import SearchService

MAX_CONTEXT_LINKED = 50


def search_query(request: retrieval_pb2.SearchRequest) -> SearchQuery:
    return SearchQuery(
        query=request.query,
        namespace=request.namespace,
        limit=request.limit,
        offset=request.offset,
        max_tokens=request.max_tokens,
        compact=request.compact,
        linked_limit=request.linked_limit,
        tags=tuple(request.tags),
        content_type=request.content_type if request.HasField("content_type") else None,
        source=request.source if request.HasField("source") else None,
        after=from_field(request, "after"),
        before=from_field(request, "before"),
        min_importance=request.min_importance if request.HasField("min_importance") else None,
        min_score=request.min_score if request.HasField("min_score") else None,
        include_metadata=request.include_metadata,
        expanded_query=request.expanded_query,
        purpose=request.purpose,
    )


def nearest_query(request: retrieval_pb2.NearestRequest) -> NearestQuery:
    return NearestQuery(
        probes=tuple(
            NearestProbe(from_bytes(q.vector), tuple(q.exclude_ids)) for q in request.queries
        ),
        namespace=request.namespace,
        limit=request.limit,
        min_similarity=request.min_similarity,
        roots_only=request.roots_only,
        content_type=request.content_type if request.HasField("content_type") else None,
        tags=tuple(request.tags),
        exclude_metadata=request.exclude_metadata,
    )


class SearchServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(self, search: SearchService, vector_index: VectorIndex) -> None:
        self._search = search
        self._nearest_index = vector_index

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.SearchResponse:
        outcome = await self._search.search(search_query(request))
        return retrieval_pb2.SearchResponse(
            results=[converters.search_result(r) for r in outcome.results],
            degraded=outcome.degraded,
            mode=outcome.mode,
            linked=[converters.linked_memory(x) for x in outcome.linked],
            total_candidates=outcome.total,
            expansion_terms=outcome.expansion_terms,
        )

    async def ContextGraph(
        self, request: retrieval_pb2.ContextGraphRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ContextGraphResponse:
        if not 0 <= request.max_linked <= MAX_CONTEXT_LINKED:
            raise InvalidArgument(f"max_linked must be 0..{MAX_CONTEXT_LINKED}", field="max_linked")
        budget = request.max_tokens
        seeds_budget = budget * 4 // 5 if (budget and request.compact) else budget
        outcome = await self._search.search(
            SearchQuery(
                query=request.query,
                namespace=request.namespace,
                limit=request.limit or 10,
                max_tokens=seeds_budget,
                compact=request.compact,
                purpose="context-graph",
            )
        )
        linked = await self._search.linked(
            [r.memory.id for r in outcome.results], request.max_linked
        )
        return retrieval_pb2.ContextGraphResponse(
            results=[converters.search_result(r) for r in outcome.results],
            linked=[converters.linked_memory(x) for x in linked],
        )

    async def Nearest(
        self, request: retrieval_pb2.NearestRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.NearestResponse:
        if request.background:
            await self._search.activity.wait_for_pause("nearest")
        found = await nearest(self._nearest_index, nearest_query(request))
        reply = retrieval_pb2.NearestResponse()
        for hits in found:
            out = reply.results.add()
            for hit in hits:
                item = out.hits.add(memory_id=hit.memory_id, similarity=hit.similarity)
                if hit.parent_id:
                    item.parent_id = hit.parent_id
        return reply
