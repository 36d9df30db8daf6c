"""Enriching one memory after it is stored or its content changes: entities and their
relationships, links to related memories, contradiction candidates and implicit goal links.

Summary memories (weekly narratives, epochs) also get temporal ``elaborates`` links to the
memories of their window (see ``temporal``). Thresholds come from ``enrichment.*`` settings.

Idempotent: a memory is enriched only while its ``enrichment_status`` is ``pending`` and only at
the version that was read; a redelivered or stale event finds nothing to do. The result is
committed with a ``memory.enriched`` event (outbox) so projections pick up the new keywords.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from exocortex.core.bus import subjects
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import Neighbour, RetrievalClient
from exocortex.core.db import outbox
from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.domain.context import context_text
from exocortex.core.domain.contradictions import find_contradiction
from exocortex.core.domain.entities import extract_entities, extract_relationships
from exocortex.core.domain.keywords import generate_keywords
from exocortex.core.domain.vectors import Vector, from_bytes, to_bytes
from exocortex.core.logging import get_logger
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import context as contexts
from exocortex.core.repositories import contradictions as contradiction_rows
from exocortex.core.repositories import links, memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.enrichment import events, metrics, repository, temporal
from exocortex.enrichment.model import MemoryChange
from exocortex.enrichment.thresholds import Thresholds

log = get_logger(__name__)


def _unit(vector: Vector) -> Vector:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class Enricher:
    def __init__(
        self,
        pool: Pool,
        retrieval: RetrievalClient,
        embedder: EmbeddingClient,
        settings: SettingsCache,
    ) -> None:
        self._pool = pool
        self._retrieval = retrieval
        self._embedder = embedder
        self._settings = settings

    async def handle(self, changes: Sequence[MemoryChange]) -> None:
        wanted = [c.memory_id for c in changes if c.change in ("stored", "updated", "restored")]
        if not wanted:
            return
        async with self._pool.connection() as conn:
            rows = await memories.get_records(
                conn, list(dict.fromkeys(wanted)), with_embedding=True
            )
        for row in rows.values():
            if row.enrichment_status == "pending" and row.is_active and not row.parent_id:
                await self.enrich(row)

    async def _vector(self, row: MemoryRecord) -> Vector | None:
        if row.embedding is not None:
            return from_bytes(bytes(row.embedding))
        async with self._pool.connection() as conn:
            chunks = [from_bytes(e) for e in await repository.chunk_embeddings(conn, row.id)]
        # A chunked memory is represented by the mean direction of its chunks.
        return _unit(np.mean(np.stack(chunks), axis=0).astype(np.float32)) if chunks else None

    async def enrich(self, row: MemoryRecord) -> None:
        started = time.perf_counter()
        settings = await self._settings.get()
        limits = Thresholds.from_settings(settings)
        entities = [
            e for e in extract_entities(row.content) if e.confidence >= limits.entity_confidence
        ]
        relationships = extract_relationships(row.content, entities)
        vector = await self._vector(row)
        neighbours: list[Neighbour] = []
        if vector is not None:
            # A failure here (retrieval away) fails the batch; it is redelivered later.
            found = await self._retrieval.nearest(
                [vector],
                namespace=row.namespace,
                limit=limits.neighbours,
                min_similarity=min(limits.relation, limits.contradiction),
                exclude_ids=[[row.id]],
                background=True,  # waits for searches to pause (see retrieval's priority)
            )
            neighbours = _roots(found[0] if found else [], row.id)
        goals = await self._goal_matches(row, vector, limits) if vector is not None else []
        context = await self._context(row, limits)

        async with self._pool.connection() as conn, conn.transaction():
            current = await repository.lock_status(conn, row.id)
            if (
                current is None
                or current["enrichment_status"] != "pending"
                or int(current["version"]) != row.version
            ):
                return  # deleted, done already, or changed since: its own event follows
            entity_ids = await repository.replace_mentions(conn, row.id, row.namespace, entities)
            await repository.add_relationships(conn, row.id, entity_ids, relationships)
            # Before the similarity links: for a memory that is both, "elaborates" says more,
            # and an existing link is never overwritten.
            hierarchy = await links.insert_missing(conn, await temporal.temporal_links(conn, row))
            related = [n for n in neighbours if n.similarity >= limits.relation]
            await links.insert_missing(
                conn,
                [
                    (row.id, n.root_id, "related", round(n.similarity, 2))
                    for n in related[: limits.relation_limit]
                ],
            )
            contradictions = await self._contradictions(conn, row, neighbours, limits)
            for goal_id, similarity in goals:
                await repository.link_goal(conn, goal_id, row.id, round(similarity, 3))
            await contexts.save(conn, row.id, context)
            keywords = generate_keywords(row.content, row.tags, [e.name for e in entities])
            version = await repository.mark_enriched(conn, row.id, keywords)
            await outbox.enqueue(
                conn,
                subjects.MEMORY_ENRICHED,
                events.enriched(row.id, version, row.namespace),
            )
        metrics.ENRICHED.inc()
        metrics.ENRICH_DURATION.observe(time.perf_counter() - started)
        log.info(
            "memory enriched",
            memory_id=row.id,
            entities=len(entities),
            links=min(len(related), limits.relation_limit),
            contradictions=contradictions,
            goals=len(goals),
            elaborates=hierarchy,
        )

    async def _context(self, row: MemoryRecord, limits: Thresholds) -> bytes | None:
        """The memory's contextual vector (see ``core.domain.context``): None for a chunked or
        long memory, one with no previous memory in its stretch of work, or when none are made
        (``enrichment.context_vectors``)."""
        if row.embedding is None or not limits.context_vectors:
            return None
        async with self._pool.connection() as conn:
            previous = await contexts.previous_content(
                conn, row.id, row.created_at, limits.context_gap
            )
        text = context_text(previous, row.content) if previous else None
        if text is None:
            return None
        return to_bytes((await self._embedder.embed([text]))[0])

    async def _contradictions(
        self,
        conn: DictConnection,
        row: MemoryRecord,
        neighbours: list[Neighbour],
        limits: Thresholds,
    ) -> int:
        close = [n for n in neighbours if n.similarity >= limits.contradiction]
        if not close:
            return 0
        others = await memories.get_records(conn, [n.root_id for n in close])
        added = 0
        for n in close:
            other = others.get(n.root_id)
            if other is None or not other.is_active:
                continue
            candidate = find_contradiction(
                row.content, other.content, negation_overlap=limits.negation_overlap
            )
            if candidate is not None and await contradiction_rows.add_candidate(
                conn, row.id, other.id, candidate
            ):
                added += 1
        return added

    async def _goal_matches(
        self, row: MemoryRecord, vector: Vector, limits: Thresholds
    ) -> list[tuple[str, float]]:
        """Active goals this memory advances, by cosine to "title: description". No tags are
        added (the seed's goal-progress tags made the memory a metadata artifact)."""
        async with self._pool.connection() as conn:
            goals = await repository.active_goals(conn, row.namespace)
        if not goals:
            return []
        missing = [g for g in goals if g["embedding"] is None]
        if missing:
            texts = [f"{g['title']}: {g['description'] or ''}".strip(": ") for g in missing]
            vectors = await self._embedder.embed(texts)
            async with self._pool.connection() as conn:
                for goal, goal_vector in zip(missing, vectors, strict=True):
                    await repository.save_goal_embedding(
                        conn, goal["id"], to_bytes(goal_vector), self._embedder.fingerprint
                    )
                    goal["embedding"] = to_bytes(goal_vector)
        unit = _unit(vector)
        out = []
        for goal in goals:
            similarity = float(np.dot(unit, _unit(from_bytes(bytes(goal["embedding"])))))
            if similarity >= limits.goal:
                out.append((goal["id"], similarity))
        return out


def _roots(hits: list[Neighbour], own_id: str) -> list[Neighbour]:
    """Chunk hits stand for their memory; keep each memory once at its best similarity."""
    seen: dict[str, Neighbour] = {}
    for hit in hits:
        root = hit.root_id
        if root != own_id and root not in seen:
            seen[root] = Neighbour(root, None, hit.similarity)
    return list(seen.values())
