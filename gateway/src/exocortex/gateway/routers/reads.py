"""Reads of memories (served by the retrieval service from Postgres).

Static paths (recent, archived, namespaces, diff) must be declared before ``/{memory_id}``.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Path

from exocortex.core.errors import NotFound
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.schemas import Memory
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["memories"])

ID_PATH = Path(min_length=1, max_length=64, description="Memory id (ULID)")


@router.get("/{memory_id}", response_model=Memory, responses={404: {"description": "Not found"}})
async def get_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    reply: retrieval_pb2.GetMemoriesResponse = await backends.retrieval.GetMemories(
        retrieval_pb2.GetMemoriesRequest(ids=[memory_id]),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    if not reply.memories:
        raise NotFound(f"memory {memory_id} not found", field="id")
    return convert.memory(reply.memories[0])
