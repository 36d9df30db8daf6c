"""Reads of the knowledge graph: entities, their memories and relationships, the whole graph and
its analysis (communities and bridges)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exocortex.core.db.pool import Pool
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.records import EntityRecord
from exocortex.retrieval.reads import entity_repository
from exocortex.retrieval.reads.entity_repository import GraphEdge
from exocortex.retrieval.reads.graph_analysis import analyse

MAX_ENTITIES = 1_000
MAX_GRAPH = 5_000
ENTITY_TYPES = ("person", "project", "technology", "organization", "concept")


@dataclass
class EntityFilter:
    namespace: str | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    query: str | None = None
    limit: int = 200
    max_memories: int | None = None


@dataclass
class Relationship:
    entity: EntityRecord
    relationship: str
    direction: str
    context: str
    confidence: float
    memory_id: str | None


class EntityService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def find(self, f: EntityFilter) -> list[EntityRecord]:
        if not 1 <= f.limit <= MAX_ENTITIES:
            raise InvalidArgument(f"limit must be between 1 and {MAX_ENTITIES}", field="limit")
        if f.type is not None and f.type not in ENTITY_TYPES:
            raise InvalidArgument(f"type must be one of {', '.join(ENTITY_TYPES)}", field="type")
        if f.max_memories is not None and f.max_memories < 0:
            raise InvalidArgument("max_memories must be 0 or more", field="max_memories")
        return await entity_repository.find(
            self._pool,
            namespace=f.namespace,
            type=f.type,
            tags=f.tags,
            query=f.query,
            limit=f.limit,
            max_memories=f.max_memories,
        )

    async def tags(self, namespace: str | None) -> list[str]:
        return await entity_repository.tags(self._pool, namespace)

    async def get(self, entity_id: str) -> EntityRecord:
        """The entity; NotFound also when it lies outside the caller's namespace scope."""
        entity = await entity_repository.get(self._pool, entity_id)
        if entity is None:
            raise NotFound(f"entity {entity_id} not found", field="id")
        return entity

    async def memories(
        self, entity_id: str, limit: int
    ) -> tuple[EntityRecord, list[tuple[str, float]]]:
        """The entity and its active memories' ids, most relevant first."""
        entity = await self.get(entity_id)
        return entity, await entity_repository.memory_relevance(self._pool, entity_id, limit)

    async def relationships(self, entity_id: str) -> list[Relationship]:
        await self.get(entity_id)
        rels, others = await entity_repository.relationships(self._pool, entity_id)
        return [
            Relationship(
                entity=others[r.other],
                relationship=r.relationship,
                direction=r.direction,
                context=r.context or "",
                confidence=float(r.confidence),
                memory_id=r.memory_id,
            )
            for r in rels
            if r.other in others
        ]

    async def graph(
        self, namespace: str | None, limit: int
    ) -> tuple[list[EntityRecord], list[GraphEdge]]:
        if not 1 <= limit <= MAX_GRAPH:
            raise InvalidArgument(f"limit must be between 1 and {MAX_GRAPH}", field="limit")
        entities = await self.find(EntityFilter(namespace=namespace, limit=min(limit, 1_000)))
        if limit > 1_000:
            entities = await entity_repository.in_namespace(self._pool, namespace, limit)
        edges = await entity_repository.edges(self._pool, [e.id for e in entities])
        return entities, edges

    async def analysis(self, namespace: str | None, limit: int) -> dict[str, Any]:
        entities, edges = await self.graph(namespace, MAX_GRAPH)
        return analyse(entities, edges, limit)
