"""Search routes: hybrid search over the projections (served by the retrieval service)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.memories import stamp
from exocortex.gateway.schemas import MemorySearch, SearchResponse
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["search"])


@router.post("/search", response_model=SearchResponse)
async def search_memories(body: MemorySearch, backends: BackendsDep) -> dict[str, Any]:
    """Hybrid search: dense vectors and BM25 keywords fused with Reciprocal Rank Fusion."""
    request = retrieval_pb2.SearchRequest(
        query=body.query,
        namespace=body.namespace,
        limit=body.limit,
        offset=body.offset,
        tags=body.tags,
        include_metadata=body.include_metadata,
        compact=body.compact,
    )
    for name in ("content_type", "source", "min_importance", "min_score"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    if body.after is not None:
        request.after.CopyFrom(stamp(body.after))
    if body.before is not None:
        request.before.CopyFrom(stamp(body.before))
    reply: retrieval_pb2.SearchResponse = await backends.retrieval.Search(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    shape = convert.compact_result if body.compact else convert.search_result
    results = [shape(r) for r in reply.results]
    return {
        "results": results,
        "count": len(results),
        "mode": reply.mode,
        "degraded": list(reply.degraded),
    }
