"""gRPC ↔ knowledge-graph reads (conversion only)."""

from __future__ import annotations

import grpc

from exocortex.core.errors import InvalidArgument
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval import converters
from exocortex.retrieval.reads.entities import EntityFilter, EntityService
from exocortex.retrieval.reads.service import ReadService
from exocortex.retrieval.reads.servicer import namespace_of

MAX_ENTITY_MEMORIES = 500
MAX_ANALYSIS = 100


class EntityServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(self, entities: EntityService, reads: ReadService) -> None:
        self._entities = entities
        self._entity_reads = reads

    async def ListEntities(
        self, request: retrieval_pb2.ListEntitiesRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListEntitiesResponse:
        rows = await self._entities.find(
            EntityFilter(
                namespace=namespace_of(request.namespace, request.namespace_set),
                type=request.type if request.HasField("type") else None,
                tags=tuple(request.tags),
                query=request.query if request.HasField("query") else None,
                limit=request.limit or 200,
                max_memories=request.max_memories if request.HasField("max_memories") else None,
            )
        )
        return retrieval_pb2.ListEntitiesResponse(entities=[converters.entity(r) for r in rows])

    async def ListEntityTags(
        self, request: retrieval_pb2.ListEntityTagsRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.ListEntityTagsResponse:
        tags = await self._entities.tags(namespace_of(request.namespace, request.namespace_set))
        return retrieval_pb2.ListEntityTagsResponse(tags=tags)

    async def GetEntity(
        self, request: retrieval_pb2.GetEntityRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Entity:
        return converters.entity(await self._entities.get(request.id))

    async def GetEntityMemories(
        self, request: retrieval_pb2.GetEntityRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.EntityMemoriesResponse:
        limit = request.limit or 50
        if not 1 <= limit <= MAX_ENTITY_MEMORIES:
            raise InvalidArgument(
                f"limit must be between 1 and {MAX_ENTITY_MEMORIES}", field="limit"
            )
        entity, ranked = await self._entities.memories(request.id, limit)
        rows, _ = await self._entity_reads.get_memories([i for i, _ in ranked])
        by_id = {r.id: r for r in rows}
        return retrieval_pb2.EntityMemoriesResponse(
            entity=converters.entity(entity),
            memories=[
                retrieval_pb2.EntityMemory(memory=converters.memory(by_id[i]), relevance=rel)
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
                entity=converters.entity(r.entity),
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
            namespace_of(request.namespace, request.namespace_set), request.limit or 1_000
        )
        return retrieval_pb2.EntityGraph(
            entities=[converters.entity(e) for e in entities],
            relationships=[
                retrieval_pb2.GraphEdge(
                    source_id=e.source_id,
                    target_id=e.target_id,
                    relationship=e.relationship,
                    confidence=float(e.confidence),
                )
                for e in edges
            ],
        )

    async def AnalyzeEntityGraph(
        self, request: retrieval_pb2.EntityGraphRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        limit = request.limit or 10
        if not 1 <= limit <= MAX_ANALYSIS:
            raise InvalidArgument(f"limit must be between 1 and {MAX_ANALYSIS}", field="limit")
        namespace = namespace_of(request.namespace, request.namespace_set)
        return converters.report(await self._entities.analysis(namespace, limit))
