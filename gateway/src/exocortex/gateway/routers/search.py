"""Search routes: hybrid search over the projections (served by the retrieval service), the
context graph, and explicit usefulness feedback (recorded by the maintenance service)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic_core import to_json

from exocortex.api.search import (
    ContextGraphBody,
    ContextGraphResponse,
    FeedbackBody,
    FeedbackResponse,
    SearchBody,
    SearchResponse,
)
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.memories import stamp
from exocortex.gateway.routers.when import parse_bound, zone
from exocortex.proto.v1 import maintenance_pb2, maintenance_pb2_grpc, retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["search"])

LINKED_CONTEXT = 3


def search_result(r: retrieval_pb2.SearchResult) -> dict[str, Any]:
    b = r.breakdown
    return {
        "memory": convert.memory(r.memory),
        "score": r.score,
        "vector_score": b.vector,
        "fts_score": b.keyword,
        "recency_score": b.recency,
        "frequency_score": b.frequency,
        "score_breakdown": {
            "fused": b.fused,
            "vector_rank": b.vector_rank or None,
            "keyword_rank": b.keyword_rank or None,
            "graph_rank": b.graph_rank or None,
            "recency": b.recency,
            "frequency": b.frequency,
            "usefulness": b.usefulness,
            "valence": b.valence,
            "tag": b.tag,
            "graph": b.graph,
            "metadata_penalty": b.metadata_penalty,
            "boost": b.boost,
            "neighbour": b.neighbour,
            "quality": b.quality,
            "goal_relevance": b.goal_relevance,
        },
    }


def compact_result(r: retrieval_pb2.SearchResult) -> dict[str, Any]:
    out = convert.compact_result(r)
    if r.preview:
        out["preview"] = r.preview
    return out


def linked_result(x: retrieval_pb2.LinkedMemory) -> dict[str, Any]:
    return {
        "memory": convert.memory(x.memory),
        "score": x.strength,
        "linked_from": x.linked_from,
        "link_type": x.link_type,
    }


def search_request(body: SearchBody) -> retrieval_pb2.SearchRequest:
    request = retrieval_pb2.SearchRequest(
        query=body.query,
        namespace=body.namespace or "",
        limit=body.limit,
        offset=body.offset,
        tags=body.tags,
        include_metadata=body.include_metadata,
        compact=body.compact,
        max_tokens=body.max_tokens or 0,
        linked_limit=LINKED_CONTEXT if body.include_linked else 0,
        purpose="search",
        expanded_query=body.expanded_query or "",
    )
    for name in ("content_type", "source", "min_importance", "min_score"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    tz = zone(body.timezone)
    after = parse_bound(body.after, tz, upper=False, field="after")
    before = parse_bound(body.before, tz, upper=True, field="before")
    if after is not None:
        request.after.CopyFrom(stamp(after))
    if before is not None:
        request.before.CopyFrom(stamp(before))
    return request


@router.post("/search", response_model=SearchResponse)
async def search_memories(body: SearchBody, backends: BackendsDep) -> Response:
    """Hybrid search: dense vectors and BM25 keywords fused with weighted Reciprocal Rank Fusion,
    then boosted (recency, usage, usefulness, valence, tags, graph); see `score_breakdown`."""
    reply: retrieval_pb2.SearchResponse = await backends.retrieval.Search(
        search_request(body), timeout=backends.settings.rpc_timeout_seconds
    )
    shape = compact_result if body.compact else search_result
    results = [shape(r) for r in reply.results]
    # The hot path answers its JSON directly: the response model documents the shape (and a
    # test holds the two together), but re-validating every result costs more than the search.
    payload = {
        "results": results,
        "count": len(results),
        "mode": reply.mode,
        "degraded": list(reply.degraded),
        "linked": [linked_result(x) for x in reply.linked],
        "expansion_terms": list(reply.expansion_terms),
    }
    # pydantic's own encoder, so values (timestamps above all) read exactly as elsewhere.
    return Response(to_json(payload), media_type="application/json")


@router.post("/context-graph", response_model=ContextGraphResponse)
async def context_graph(body: ContextGraphBody, backends: BackendsDep) -> dict[str, Any]:
    """Search seeds plus up to `max_linked` memories linked to them; with `compact` and
    `max_tokens`, 80% of the budget goes to seeds and 20% to linked memories."""
    reply: retrieval_pb2.ContextGraphResponse = await backends.retrieval.ContextGraph(
        retrieval_pb2.ContextGraphRequest(
            query=body.query,
            namespace=body.namespace or "",
            limit=body.limit,
            max_tokens=body.max_tokens or 0,
            compact=body.compact,
            max_linked=body.max_linked,
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    if body.compact:
        seeds = [compact_result(r) for r in reply.results]
    else:
        seeds = [{"memory": convert.memory(r.memory), "score": r.score} for r in reply.results]
    linked = [linked_result(x) for x in reply.linked]
    if body.compact and body.max_tokens:
        budget, used, kept = body.max_tokens // 5, 0, []
        for item in linked:
            cost = (len(item["memory"]["content"][:200]) + 3) // 4 + 15
            if used + cost > budget:
                break
            kept.append(item)
            used += cost
        linked = kept
    return {
        "results": seeds + linked,
        "count": len(seeds) + len(linked),
        "linked_count": len(linked),
    }


@router.post("/feedback", response_model=FeedbackResponse)
async def feedback(body: FeedbackBody, backends: BackendsDep) -> dict[str, Any]:
    """Explicit usefulness: each memory's `useful_count` goes up by one. Unknown ids are listed
    in `missing_ids`, never counted."""
    stub = maintenance_pb2_grpc.MaintenanceStub(backends.channels["maintenance"])
    reply: maintenance_pb2.RecordFeedbackResponse = await stub.RecordFeedback(
        maintenance_pb2.RecordFeedbackRequest(ids=body.ids),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {
        "recorded": len(reply.recorded_ids),
        "recorded_ids": list(reply.recorded_ids),
        "missing_ids": list(reply.missing_ids),
    }
