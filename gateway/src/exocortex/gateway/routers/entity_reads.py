"""Reads of the knowledge graph (served by the retrieval service). Static paths (tags, graph)
come before ``/{entity_id}``; entity writes live in their own router."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from google.protobuf.json_format import MessageToDict

from exocortex.api.limits import COUNT_MAX, ID_MAX, NAMESPACE_MAX
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api/entities", tags=["entities"])

ENTITY_ID = Path(min_length=1, max_length=ID_MAX, description="Entity id (ULID)")
Namespace = Annotated[
    str | None,
    Query(
        min_length=1, max_length=NAMESPACE_MAX, description="Only this namespace (default: all)."
    ),
]
EntityType = Annotated[
    str | None,
    Query(pattern="^(person|project|technology|organization|concept)$"),
]


def entity(e: retrieval_pb2.Entity) -> dict[str, Any]:
    return {
        "id": e.id,
        "namespace": e.namespace,
        "name": e.name,
        "type": e.type,
        "aliases": list(e.aliases),
        "metadata": json.loads(e.metadata_json or "{}"),
        "tags": list(e.tags),
        "memory_count": e.memory_count,
        "created_at": e.created_at.ToDatetime(tzinfo=UTC),
        "updated_at": e.updated_at.ToDatetime(tzinfo=UTC),
    }


@router.get("")
async def list_entities(
    backends: BackendsDep,
    namespace: Namespace = None,
    type: EntityType = None,
    tags: Annotated[str | None, Query(description="Comma-separated; any matches.")] = None,
    query: Annotated[
        str | None, Query(max_length=200, description="Name or alias contains.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    max_memories: Annotated[
        int | None,
        Query(
            ge=0,
            le=COUNT_MAX,
            description="Only entities linked to at most this many active memories "
            "(1: dangling, 0: orphaned).",
        ),
    ] = None,
) -> dict[str, Any]:
    request = retrieval_pb2.ListEntitiesRequest(
        namespace=namespace or "",
        namespace_set=namespace is not None,
        tags=[t.strip().lower() for t in (tags or "").split(",") if t.strip()],
        limit=limit,
    )
    if type is not None:
        request.type = type
    if query:
        request.query = query
    if max_memories is not None:
        request.max_memories = max_memories
    reply: retrieval_pb2.ListEntitiesResponse = await backends.retrieval.ListEntities(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    results = [entity(e) for e in reply.entities]
    return {"results": results, "count": len(results)}


@router.get("/tags")
async def entity_tags(backends: BackendsDep, namespace: Namespace = None) -> dict[str, Any]:
    reply: retrieval_pb2.ListEntityTagsResponse = await backends.retrieval.ListEntityTags(
        retrieval_pb2.ListEntityTagsRequest(
            namespace=namespace or "", namespace_set=namespace is not None
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {"tags": list(reply.tags)}


@router.get("/graph")
async def entity_graph(
    backends: BackendsDep,
    namespace: Namespace = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
) -> dict[str, Any]:
    reply: retrieval_pb2.EntityGraph = await backends.retrieval.GetEntityGraph(
        retrieval_pb2.EntityGraphRequest(
            namespace=namespace or "", namespace_set=namespace is not None, limit=limit
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {
        "entities": [entity(e) for e in reply.entities],
        "relationships": [
            {
                "source_id": r.source_id,
                "target_id": r.target_id,
                "relationship": r.relationship,
                "confidence": r.confidence,
            }
            for r in reply.relationships
        ],
    }


@router.get("/graph/analysis")
async def entity_graph_analysis(
    backends: BackendsDep,
    namespace: Namespace = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
) -> dict[str, Any]:
    """Stats, centrality (betweenness; sampled above 1,000 entities), bridges and communities
    (Louvain with a fixed seed: the same graph always gives the same communities)."""
    reply: retrieval_pb2.Report = await backends.retrieval.AnalyzeEntityGraph(
        retrieval_pb2.EntityGraphRequest(
            namespace=namespace or "", namespace_set=namespace is not None, limit=limit
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return report_body(reply)


def report_body(reply: retrieval_pb2.Report) -> dict[str, Any]:
    body: dict[str, Any] = _ints(MessageToDict(reply.body))
    return body


def _ints(value: Any) -> Any:
    """Struct carries every number as a double; whole numbers go back to ints for JSON."""
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


@router.get("/{entity_id}", responses={404: {"description": "Not found"}})
async def get_entity(backends: BackendsDep, entity_id: str = ENTITY_ID) -> dict[str, Any]:
    reply: retrieval_pb2.Entity = await backends.retrieval.GetEntity(
        retrieval_pb2.GetEntityRequest(id=entity_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return entity(reply)


@router.get("/{entity_id}/memories", responses={404: {"description": "Not found"}})
async def entity_memories(
    backends: BackendsDep,
    entity_id: str = ENTITY_ID,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> dict[str, Any]:
    """The entity's active memories, most relevant first."""
    reply: retrieval_pb2.EntityMemoriesResponse = await backends.retrieval.GetEntityMemories(
        retrieval_pb2.GetEntityRequest(id=entity_id, limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    found = [{**convert.memory(m.memory), "relevance": m.relevance} for m in reply.memories]
    return {"entity": entity(reply.entity), "memories": found, "count": len(found)}


@router.get("/{entity_id}/relationships", responses={404: {"description": "Not found"}})
async def entity_relationships(backends: BackendsDep, entity_id: str = ENTITY_ID) -> dict[str, Any]:
    reply: retrieval_pb2.EntityRelationshipsResponse = (
        await backends.retrieval.GetEntityRelationships(
            retrieval_pb2.GetEntityRequest(id=entity_id),
            timeout=backends.settings.rpc_timeout_seconds,
        )
    )
    results = [
        {
            "entity": entity(r.entity),
            "relationship": r.relationship,
            "direction": r.direction,
            "context": r.context,
            "confidence": r.confidence,
            "memory_id": r.memory_id if r.HasField("memory_id") else None,
        }
        for r in reply.relationships
    ]
    return {"results": results, "count": len(results)}
