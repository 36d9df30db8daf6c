from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Path, status
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.errors import NotFound
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.schemas import (
    Memory,
    MemoryCreate,
    MemorySearch,
    SearchResponse,
    StoredMemory,
)
from exocortex.proto.v1 import common_pb2, ingest_pb2, retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["memories"])

ID_PATH = Path(min_length=1, max_length=64, description="Memory id (ULID)")


def _stamp(value: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _attribution(body: MemoryCreate) -> dict[str, str]:
    return {k: v for k in convert.ATTRIBUTION_FIELDS if (v := getattr(body, k)) is not None}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=StoredMemory)
async def create_memory(body: MemoryCreate, backends: BackendsDep) -> dict[str, Any]:
    """Store a memory. Returns once it is searchable (`indexed: true`) or after a bounded wait
    (`indexed: false`: it is committed and will be searchable shortly)."""
    request = ingest_pb2.StoreMemoryRequest(
        content=body.content,
        namespace=body.namespace,
        tags=body.tags,
        content_type=body.content_type,
        source=body.source,
        benchmark=body.benchmark,
        metadata_json=json.dumps(body.metadata) if body.metadata else "",
        attribution=common_pb2.Attribution(
            **{
                k: getattr(body, k)
                for k in convert.ATTRIBUTION_FIELDS
                if getattr(body, k) is not None
            }
        ),
    )
    for name in ("source_uri", "importance", "valence", "is_metadata"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    if body.expires_at is not None:
        request.expires_at.CopyFrom(_stamp(body.expires_at))
    timeout = backends.settings.rpc_timeout_seconds
    stored: ingest_pb2.StoreMemoryResponse = await backends.ingest.StoreMemory(
        request, timeout=timeout
    )
    wait_ms = backends.settings.store_wait_ms
    indexed = False
    if wait_ms > 0:
        reply = await backends.retrieval.AwaitIndexed(
            retrieval_pb2.AwaitIndexedRequest(
                memory_id=stored.memory.id, version=stored.memory.version, timeout_ms=wait_ms
            ),
            timeout=wait_ms / 1000 + 5,
        )
        indexed = reply.indexed
    out = convert.memory(stored.memory)
    out["dedup_action"] = stored.dedup_action
    out["superseded_id"] = stored.matched_id if stored.HasField("matched_id") else None
    out["dedup_similarity"] = (
        stored.dedup_similarity if stored.HasField("dedup_similarity") else None
    )
    out["indexed"] = indexed
    return out


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
        request.after.CopyFrom(_stamp(body.after))
    if body.before is not None:
        request.before.CopyFrom(_stamp(body.before))
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


@router.get("/{memory_id}", response_model=Memory, responses={404: {"description": "Not found"}})
async def get_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    reply: retrieval_pb2.GetMemoriesResponse = await backends.retrieval.GetMemories(
        retrieval_pb2.GetMemoriesRequest(ids=[memory_id]),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    if not reply.memories:
        raise NotFound(f"memory {memory_id} not found", field="id")
    return convert.memory(reply.memories[0])
