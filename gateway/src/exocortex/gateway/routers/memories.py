from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Path, status
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.schemas import (
    MemoryCreate,
    StoredMemory,
)
from exocortex.proto.v1 import common_pb2, ingest_pb2, retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["memories"])

ID_PATH = Path(min_length=1, max_length=64, description="Memory id (ULID)")


def stamp(value: Any) -> Timestamp:
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
        request.expires_at.CopyFrom(stamp(body.expires_at))
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
