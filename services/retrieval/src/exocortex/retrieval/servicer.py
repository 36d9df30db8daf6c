"""gRPC ↔ service conversion only."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core import scope
from exocortex.core.domain.tags import alias_map, expand_aliases
from exocortex.core.errors import InvalidArgument
from exocortex.core.repositories import memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval.entities import EntityFilter, EntityService
from exocortex.retrieval.nearest import nearest
from exocortex.retrieval.reads import ListQuery, ReadService
from exocortex.retrieval.reports import ReportService
from exocortex.retrieval.search import LinkedRow, ScoredMemory, SearchService
from exocortex.retrieval.snapshot import SnapshotService
from exocortex.retrieval.waiters import IndexedVersions

MAX_AWAIT_MS = 30_000
Row = dict[str, Any]


def _result(item: ScoredMemory) -> retrieval_pb2.SearchResult:
    fused = item.fused
    b = item.breakdown
    return retrieval_pb2.SearchResult(
        memory=memories.to_proto(item.row),
        score=item.score,
        preview=item.preview,
        breakdown=retrieval_pb2.ScoreBreakdown(
            fused=fused.score,
            vector=fused.raw_scores.get("vector", 0.0),
            keyword=fused.raw_scores.get("keyword", 0.0),
            vector_rank=fused.ranks.get("vector", 0),
            keyword_rank=fused.ranks.get("keyword", 0),
            graph_rank=fused.ranks.get("graph", 0),
            recency=b.get("recency", 0.0),
            frequency=b.get("frequency", 0.0),
            usefulness=b.get("usefulness", 0.0),
            valence=b.get("valence", 0.0),
            tag=b.get("tag", 0.0),
            graph=b.get("graph", 0.0),
            metadata_penalty=b.get("metadata_penalty", 1.0),
            boost=b.get("boost", 1.0),
            neighbour=b.get("neighbour", 0.0),
            quality=b.get("quality", 0.0),
            goal_relevance=b.get("goal_relevance", 0.0),
        ),
    )


def _linked(item: LinkedRow) -> retrieval_pb2.LinkedMemory:
    return retrieval_pb2.LinkedMemory(
        memory=memories.to_proto(item.row),
        linked_from=item.link.linked_from,
        link_type=item.link.link_type,
        strength=item.link.strength,
    )


def _stamp(value: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def entity_proto(row: Row) -> retrieval_pb2.Entity:
    aliases = row.get("aliases") or []
    return retrieval_pb2.Entity(
        id=row["id"],
        namespace=row["namespace"],
        name=row["name"],
        type=row["type"],
        aliases=[str(a) for a in aliases] if isinstance(aliases, list) else [],
        metadata_json=json.dumps(row.get("metadata") or {}, separators=(",", ":")),
        tags=list(row.get("tags") or []),
        memory_count=int(row.get("memory_count") or 0),
        created_at=_stamp(row["created_at"]),
        updated_at=_stamp(row["updated_at"]),
    )


def _report(body: dict[str, Any]) -> retrieval_pb2.Report:
    struct = struct_pb2.Struct()
    struct.update(body)
    return retrieval_pb2.Report(body=struct)


def _params(request: retrieval_pb2.ReportRequest) -> dict[str, Any]:
    if not request.params_json:
        return {}
    try:
        parsed = json.loads(request.params_json)
    except json.JSONDecodeError as exc:
        raise InvalidArgument("params_json must be a JSON object", field="params_json") from exc
    if not isinstance(parsed, dict):
        raise InvalidArgument("params_json must be a JSON object", field="params_json")
    return parsed


def _ns(namespace: str, namespace_set: bool) -> str | None:
    """The request's namespace, checked against the caller's scope; when it names none, every
    namespace the caller may see (see exocortex.core.scope.default_namespace)."""
    if namespace_set:
        return scope.require(namespace or "default")
    return scope.default_namespace()


class RetrievalServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(
        self,
        search: SearchService,
        reads: ReadService,
        versions: IndexedVersions,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        *,
        entities: EntityService,
        reports: ReportService,
        settings: SettingsCache,
        snapshot: SnapshotService,
    ) -> None:
        self._search = search
        self._reads = reads
        self._versions = versions
        self._vector = vector_index
        self._keyword = keyword_index
        self._entities = entities
        self._reports = reports
        self._settings = settings
        self._snapshot = snapshot

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.SearchResponse:
        outcome = await self._search.search(request)
        return retrieval_pb2.SearchResponse(
            results=[_result(r) for r in outcome.results],
            degraded=outcome.degraded,
            mode=outcome.mode,
            linked=[_linked(x) for x in outcome.linked],
            total_candidates=outcome.total,
            expansion_terms=outcome.expansion_terms,
        )

    async def ContextGraph(
        self, request: retrieval_pb2.ContextGraphRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ContextGraphResponse:
        if not 0 <= request.max_linked <= 50:
            raise InvalidArgument("max_linked must be 0..50", field="max_linked")
        budget = request.max_tokens
        seeds_budget = budget * 4 // 5 if (budget and request.compact) else budget
        outcome = await self._search.search(
            retrieval_pb2.SearchRequest(
                query=request.query,
                namespace=request.namespace,
                limit=request.limit or 10,
                max_tokens=seeds_budget,
                compact=request.compact,
                purpose="context-graph",
            )
        )
        linked = await self._search.linked(
            [r.row["id"] for r in outcome.results], request.max_linked
        )
        return retrieval_pb2.ContextGraphResponse(
            results=[_result(r) for r in outcome.results],
            linked=[_linked(x) for x in linked],
        )

    async def ProjectSnapshot(
        self, request: retrieval_pb2.ProjectSnapshotRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ProjectSnapshotReply:
        snap = await self._snapshot.snapshot(request)
        return retrieval_pb2.ProjectSnapshotReply(
            project=snap.project,
            since=_stamp(snap.since),
            recent=[_result(r) for r in snap.recent],
            decisions=[_result(r) for r in snap.decisions],
            open_threads=[_result(r) for r in snap.open_threads],
            techniques=[_result(r) for r in snap.techniques],
            goals=snap.goals,
            degraded=snap.degraded,
        )

    async def GetMemories(
        self, request: retrieval_pb2.GetMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.GetMemoriesResponse:
        found, missing = await self._reads.get_memories(
            list(request.ids), record_use=request.record_use
        )
        return retrieval_pb2.GetMemoriesResponse(
            memories=[memories.to_proto(r) for r in found], missing_ids=missing
        )

    async def ListMemories(
        self, request: retrieval_pb2.ListMemoriesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListMemoriesResponse:
        aliases = alias_map(await self._settings.get())
        rows, total = await self._reads.list_memories(
            ListQuery(
                view=request.view or "recent",
                namespace=_ns(request.namespace, request.namespace_set),
                limit=request.limit or 20,
                offset=request.offset,
                tags=tuple(expand_aliases(request.tags, aliases)) if request.tags else (),
                content_type=request.content_type if request.HasField("content_type") else None,
                after=request.after.ToDatetime(tzinfo=UTC) if request.HasField("after") else None,
                before=(
                    request.before.ToDatetime(tzinfo=UTC) if request.HasField("before") else None
                ),
                min_importance=(
                    request.min_importance if request.HasField("min_importance") else None
                ),
            )
        )
        return retrieval_pb2.ListMemoriesResponse(
            memories=[memories.to_proto(r) for r in rows], total=total
        )

    async def ListNamespaces(
        self, request: retrieval_pb2.ListNamespacesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListNamespacesResponse:
        names = [n for n in await self._reads.namespaces() if scope.allows(n)]
        return retrieval_pb2.ListNamespacesResponse(namespaces=names)

    async def Diff(
        self, request: retrieval_pb2.DiffRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.DiffResponse:
        if not request.HasField("since"):
            raise InvalidArgument("since is required", field="since")
        created, updated, archived = await self._reads.diff(
            request.since.ToDatetime(tzinfo=UTC),
            request.limit or 50,
            _ns(request.namespace, request.namespace_set),
        )
        return retrieval_pb2.DiffResponse(
            created=[memories.to_proto(r) for r in created],
            updated=[memories.to_proto(r) for r in updated],
            archived=[memories.to_proto(r) for r in archived],
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
                    created_at=_stamp(x.created_at),
                    preview=memories.to_proto(x.preview),
                )
                for x in links
            ]
        )

    async def ListEntities(
        self, request: retrieval_pb2.ListEntitiesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListEntitiesResponse:
        rows = await self._entities.find(
            EntityFilter(
                namespace=_ns(request.namespace, request.namespace_set),
                type=request.type if request.HasField("type") else None,
                tags=tuple(request.tags),
                query=request.query if request.HasField("query") else None,
                limit=request.limit or 200,
            )
        )
        return retrieval_pb2.ListEntitiesResponse(entities=[entity_proto(r) for r in rows])

    async def ListEntityTags(
        self, request: retrieval_pb2.ListEntityTagsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListEntityTagsResponse:
        tags = await self._entities.tags(_ns(request.namespace, request.namespace_set))
        return retrieval_pb2.ListEntityTagsResponse(tags=tags)

    async def GetEntity(
        self, request: retrieval_pb2.GetEntityRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Entity:
        return entity_proto(await self._entities.get(request.id))

    async def GetEntityMemories(
        self, request: retrieval_pb2.GetEntityRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.EntityMemoriesResponse:
        limit = request.limit or 50
        if not 1 <= limit <= 500:
            raise InvalidArgument("limit must be between 1 and 500", field="limit")
        entity, ranked = await self._entities.memories(request.id, limit)
        rows, _ = await self._reads.get_memories([i for i, _ in ranked])
        by_id = {r["id"]: r for r in rows}
        return retrieval_pb2.EntityMemoriesResponse(
            entity=entity_proto(entity),
            memories=[
                retrieval_pb2.EntityMemory(memory=memories.to_proto(by_id[i]), relevance=rel)
                for i, rel in ranked
                if i in by_id
            ],
        )

    async def GetEntityRelationships(
        self, request: retrieval_pb2.GetEntityRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.EntityRelationshipsResponse:
        rels = await self._entities.relationships(request.id)
        out = []
        for r in rels:
            msg = retrieval_pb2.EntityRelationship(
                entity=entity_proto(r.entity),
                relationship=r.relationship,
                direction=r.direction,
                context=r.context,
                confidence=r.confidence,
            )
            if r.memory_id:
                msg.memory_id = r.memory_id
            out.append(msg)
        return retrieval_pb2.EntityRelationshipsResponse(relationships=out)

    async def GetEntityGraph(
        self, request: retrieval_pb2.EntityGraphRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.EntityGraph:
        entities, edges = await self._entities.graph(
            _ns(request.namespace, request.namespace_set), request.limit or 1_000
        )
        return retrieval_pb2.EntityGraph(
            entities=[entity_proto(e) for e in entities],
            relationships=[
                retrieval_pb2.GraphEdge(
                    source_id=e["source_id"],
                    target_id=e["target_id"],
                    relationship=e["relationship"],
                    confidence=float(e["confidence"]),
                )
                for e in edges
            ],
        )

    async def AnalyzeEntityGraph(
        self, request: retrieval_pb2.EntityGraphRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        limit = request.limit or 10
        if not 1 <= limit <= 100:
            raise InvalidArgument("limit must be between 1 and 100", field="limit")
        return _report(
            await self._entities.analysis(_ns(request.namespace, request.namespace_set), limit)
        )

    async def GetStats(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        return _report(await self._reports.stats(_ns(request.namespace, request.namespace_set)))

    async def GetTimeline(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        return _report(
            await self._reports.timeline(
                _ns(request.namespace, request.namespace_set), _params(request)
            )
        )

    async def GetTemporalStats(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        return _report(
            await self._reports.temporal_stats(
                _ns(request.namespace, request.namespace_set), _params(request)
            )
        )

    async def GetHierarchy(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        return _report(
            await self._reports.hierarchy(
                _ns(request.namespace, request.namespace_set), _params(request)
            )
        )

    async def Ping(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        return _report(await self._reports.ping(_ns(request.namespace, request.namespace_set)))

    async def AwaitIndexed(
        self, request: retrieval_pb2.AwaitIndexedRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.AwaitIndexedResponse:
        if not 0 <= request.timeout_ms <= MAX_AWAIT_MS:
            raise InvalidArgument(f"timeout_ms must be 0..{MAX_AWAIT_MS}", field="timeout_ms")
        if self._versions.get(request.memory_id) is None:
            # Not projected by this process (yet, or before a restart): the index may have it.
            stored = await self._vector.versions([request.memory_id])
            if stored.get(request.memory_id, 0) >= request.version:
                return retrieval_pb2.AwaitIndexedResponse(indexed=True)
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
        if request.background:
            await self._search.activity.wait_for_pause("nearest")
        return await nearest(self._vector, request)
