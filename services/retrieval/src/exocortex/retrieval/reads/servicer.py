"""gRPC ↔ memory reads and the project snapshot (conversion only)."""

from __future__ import annotations

import grpc

from exocortex.core import scope
from exocortex.core.domain.tags import alias_map, expand_aliases
from exocortex.core.errors import InvalidArgument
from exocortex.core.repositories.goal_protos import goal_to_proto
from exocortex.core.rpc.timestamps import from_field
from exocortex.core.settings_cache import SettingsCache
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval import converters
from exocortex.retrieval.reads.service import ListQuery, ReadService
from exocortex.retrieval.reads.snapshot import DEFAULT_LIMITS, SnapshotQuery, SnapshotService


def namespace_of(namespace: str, namespace_set: bool) -> str | None:
    """The request's namespace, checked against the caller's scope; when it names none, every
    namespace the caller may see (see exocortex.core.scope.default_namespace)."""
    if namespace_set:
        return scope.require(namespace or "default")
    return scope.default_namespace()


def snapshot_query(request: retrieval_pb2.ProjectSnapshotRequest) -> SnapshotQuery:
    return SnapshotQuery(
        project=request.project,
        namespace=request.namespace,
        days=request.days,
        limits={s: int(getattr(request, f"{s}_limit")) for s in DEFAULT_LIMITS},
    )


class ReadsServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(
        self, reads: ReadService, snapshot: SnapshotService, settings: SettingsCache
    ) -> None:
        self._reads = reads
        self._snapshot = snapshot
        self._settings = settings

    async def GetMemories(
        self, request: retrieval_pb2.GetMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.GetMemoriesResponse:
        found, missing = await self._reads.get_memories(
            list(request.ids), record_use=request.record_use
        )
        return retrieval_pb2.GetMemoriesResponse(
            memories=[converters.memory(r) for r in found], missing_ids=missing
        )

    async def ListMemories(
        self, request: retrieval_pb2.ListMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListMemoriesResponse:
        aliases = alias_map(await self._settings.get())
        rows, total = await self._reads.list_memories(
            ListQuery(
                view=request.view or "recent",
                namespace=namespace_of(request.namespace, request.namespace_set),
                limit=request.limit or 20,
                offset=request.offset,
                tags=tuple(expand_aliases(request.tags, aliases)) if request.tags else (),
                content_type=request.content_type if request.HasField("content_type") else None,
                after=from_field(request, "after"),
                before=from_field(request, "before"),
                min_importance=(
                    request.min_importance if request.HasField("min_importance") else None
                ),
            )
        )
        return retrieval_pb2.ListMemoriesResponse(
            memories=[converters.memory(r) for r in rows], total=total
        )

    async def ListNamespaces(
        self, request: retrieval_pb2.ListNamespacesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListNamespacesResponse:
        names = [n for n in await self._reads.namespaces() if scope.allows(n)]
        return retrieval_pb2.ListNamespacesResponse(namespaces=names)

    async def Diff(
        self, request: retrieval_pb2.DiffRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.DiffResponse:
        since = from_field(request, "since")
        if since is None:
            raise InvalidArgument("since is required", field="since")
        diff = await self._reads.diff(
            since, request.limit or 50, namespace_of(request.namespace, request.namespace_set)
        )
        return retrieval_pb2.DiffResponse(
            created=[converters.memory(r) for r in diff.created],
            updated=[converters.memory(r) for r in diff.updated],
            archived=[converters.memory(r) for r in diff.archived],
        )

    async def GetLinks(
        self, request: retrieval_pb2.GetLinksRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.GetLinksResponse:
        links = await self._reads.links(request.memory_id)
        return retrieval_pb2.GetLinksResponse(
            links=[
                retrieval_pb2.MemoryLink(
                    memory_id=x.memory_id,
                    link_type=x.link_type,
                    strength=x.strength,
                    direction=x.direction,
                    created_at=converters.stamp(x.created_at),
                    preview=converters.memory(x.preview),
                )
                for x in links
            ]
        )

    async def ProjectSnapshot(
        self, request: retrieval_pb2.ProjectSnapshotRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ProjectSnapshotReply:
        snap = await self._snapshot.snapshot(snapshot_query(request))
        return retrieval_pb2.ProjectSnapshotReply(
            project=snap.project,
            since=converters.stamp(snap.since),
            recent=[converters.search_result(r) for r in snap.recent],
            decisions=[converters.search_result(r) for r in snap.decisions],
            open_threads=[converters.search_result(r) for r in snap.open_threads],
            techniques=[converters.search_result(r) for r in snap.techniques],
            goals=[goal_to_proto(g.goal, g.milestones, g.progress_count) for g in snap.goals],
            degraded=snap.degraded,
        )
