"""Reads of memories (served by the retrieval service from Postgres).

Static paths (recent, archived, namespaces, diff) must be declared before ``/{memory_id}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from exocortex.api.limits import (
    DIFF_LIMIT_MAX,
    ID_MAX,
    NAMESPACE_MAX,
    RECENT_LIMIT_MAX,
    RECENT_OFFSET_MAX,
)
from exocortex.api.memories import Memory
from exocortex.api.reads import Diff, Links, MemoryList, Namespaces
from exocortex.api.vocabulary import ContentType
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.memories import stamp
from exocortex.gateway.routers.when import parse_bound, zone
from exocortex.proto.v1 import retrieval_pb2

router = APIRouter(prefix="/api/memories", tags=["memories"])

ID_PATH = Path(min_length=1, max_length=ID_MAX, description="Memory id (ULID)")
Namespace = Annotated[
    str | None,
    Query(
        min_length=1, max_length=NAMESPACE_MAX, description="Only this namespace (default: all)."
    ),
]


def _csv(value: str | None) -> list[str]:
    return [t for t in (value or "").split(",") if t.strip()]


async def _list(
    backends: BackendsDep,
    view: str,
    *,
    namespace: str | None,
    limit: int,
    offset: int,
    tags: str | None = None,
    content_type: str | None = None,
    after: str | None = None,
    before: str | None = None,
    timezone: str | None = None,
    min_importance: float | None = None,
) -> dict[str, Any]:
    request = retrieval_pb2.ListMemoriesRequest(
        view=view,
        namespace=namespace or "",
        namespace_set=namespace is not None,
        limit=limit,
        offset=offset,
        tags=_csv(tags),
    )
    if content_type is not None:
        request.content_type = content_type
    if min_importance is not None:
        request.min_importance = min_importance
    tz = zone(timezone)
    low = parse_bound(after, tz, upper=False, field="after")
    high = parse_bound(before, tz, upper=True, field="before")
    if low is not None:
        request.after.CopyFrom(stamp(low))
    if high is not None:
        request.before.CopyFrom(stamp(high))
    reply: retrieval_pb2.ListMemoriesResponse = await backends.retrieval.ListMemories(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    results = [convert.memory(m) for m in reply.memories]
    return {"results": results, "count": len(results), "total": reply.total}


def _clamped(raw: str | None, *, default: int, low: int, high: int) -> int:
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        value = default
    return min(high, max(low, value))


@router.get("/recent", response_model=MemoryList)
async def recent(
    backends: BackendsDep,
    namespace: Namespace = None,
    limit: Annotated[
        str | None,
        Query(description="1-100, default 20; out-of-range or non-numeric values are clamped."),
    ] = None,
    offset: Annotated[str | None, Query(description="Default 0; negative counts as 0.")] = None,
    tags: Annotated[str | None, Query(description="Comma-separated; any matches.")] = None,
    content_type: ContentType | None = None,
    after: Annotated[str | None, Query(description="Date or ISO date-time.")] = None,
    before: Annotated[str | None, Query(description="Date or ISO date-time.")] = None,
    timezone: Annotated[str | None, Query(description="IANA zone for bare dates.")] = None,
    min_importance: Annotated[float | None, Query(ge=0, le=1)] = None,
) -> dict[str, Any]:
    """Active memories, newest first, filtered by tags, type, dates and importance (no semantic
    search). Chunks are not listed; their memory is. Like the original API, ``limit`` and
    ``offset`` are forgiving: a dashboard's half-typed value gets the default, not an error."""
    return await _list(
        backends,
        "recent",
        namespace=namespace,
        limit=_clamped(limit, default=20, low=1, high=100),
        offset=_clamped(offset, default=0, low=0, high=1_000_000),
        tags=tags,
        content_type=content_type,
        after=after,
        before=before,
        timezone=timezone,
        min_importance=min_importance,
    )


@router.get("/archived", response_model=MemoryList)
async def archived(
    backends: BackendsDep,
    namespace: Namespace = None,
    limit: Annotated[int, Query(ge=1, le=RECENT_LIMIT_MAX)] = 20,
    offset: Annotated[int, Query(ge=0, le=RECENT_OFFSET_MAX)] = 0,
) -> dict[str, Any]:
    """Archived (inactive) memories, most recently archived first."""
    return await _list(backends, "archived", namespace=namespace, limit=limit, offset=offset)


@router.get("/namespaces", response_model=Namespaces)
async def namespaces(backends: BackendsDep) -> dict[str, Any]:
    reply: retrieval_pb2.ListNamespacesResponse = await backends.retrieval.ListNamespaces(
        retrieval_pb2.ListNamespacesRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    return {"namespaces": list(reply.namespaces)}


@router.get("/diff", response_model=Diff)
async def diff(
    backends: BackendsDep,
    since: Annotated[str | None, Query(description="Date or ISO date-time (required).")] = None,
    limit: Annotated[int, Query(ge=1, le=DIFF_LIMIT_MAX)] = 50,
    namespace: Namespace = None,
    timezone: str | None = None,
) -> dict[str, Any]:
    """What changed since a time: created, updated (created before), archived."""
    when = parse_bound(since, zone(timezone), upper=False, field="since")
    if when is None:
        raise InvalidArgument("since is required", field="since")
    reply: retrieval_pb2.DiffResponse = await backends.retrieval.Diff(
        retrieval_pb2.DiffRequest(
            since=stamp(when),
            limit=limit,
            namespace=namespace or "",
            namespace_set=namespace is not None,
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    out = {
        "created": [convert.memory(m) for m in reply.created],
        "updated": [convert.memory(m) for m in reply.updated],
        "archived": [convert.memory(m) for m in reply.archived],
    }
    return {**out, "counts": {k: len(v) for k, v in out.items()}}


@router.get(
    "/{memory_id}/links", response_model=Links, responses={404: {"description": "Not found"}}
)
async def links(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    reply: retrieval_pb2.GetLinksResponse = await backends.retrieval.GetLinks(
        retrieval_pb2.GetLinksRequest(memory_id=memory_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    out = []
    for x in reply.links:
        p = x.preview
        out.append(
            {
                "memory_id": x.memory_id,
                "link_type": x.link_type,
                "strength": x.strength,
                "direction": x.direction,
                "created_at": x.created_at.ToDatetime().isoformat() + "Z",
                "preview": {
                    "id": p.id,
                    "content": p.content[:200],
                    "content_type": p.content_type,
                    "importance": p.importance,
                    "created_at": p.created_at.ToDatetime().isoformat() + "Z",
                },
            }
        )
    return {"links": out, "count": len(out)}


@router.get("/{memory_id}", response_model=Memory, responses={404: {"description": "Not found"}})
async def get_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    """One memory. Fetching a memory that a search served in the last 5 minutes counts once as
    implicit usefulness."""
    reply: retrieval_pb2.GetMemoriesResponse = await backends.retrieval.GetMemories(
        retrieval_pb2.GetMemoriesRequest(ids=[memory_id], record_use=True),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    if not reply.memories:
        raise NotFound(f"memory {memory_id} not found", field="id")
    return convert.memory(reply.memories[0])
