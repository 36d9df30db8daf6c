"""Enriching memories after they are stored or their content changes: entities and their
relationships, links to related memories, contradiction candidates and implicit goal links.
The memories of a batch of events are enriched together: one nearest-neighbour call per
namespace, one transaction and one batch of outbox events.

Summary memories (weekly narratives, epochs) also get temporal ``elaborates`` links to the
memories of their window (see ``temporal``). Thresholds come from ``enrichment.*`` settings.

Idempotent: a memory is enriched only while its ``enrichment_status`` is ``pending`` and only at
the version that was read; a redelivered or stale event finds nothing to do. A result that
changes the memory's keywords is committed at a new version with a ``memory.enriched`` event
(outbox) so projections pick up the new keywords. The write path gives a memory the keywords
enrichment would (entity names included, ``core.domain.keywords.memory_keywords``), so most
results change none: they are recorded at the same version, with no event.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from exocortex.core.bus import subjects
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.clients.retrieval import Neighbour, RetrievalClient
from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.domain.context import context_text
from exocortex.core.domain.contradictions import find_contradiction
from exocortex.core.domain.entities import extract_entities, extract_relationships
from exocortex.core.domain.keywords import generate_keywords
from exocortex.core.domain.vectors import Vector, from_bytes, to_bytes
from exocortex.core.logging import current_correlation_id, get_logger
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import bulk, links, memories
from exocortex.core.repositories import context as contexts
from exocortex.core.repositories import contradictions as contradiction_rows
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
        todo = [
            row
            for row in rows.values()
            if row.enrichment_status == "pending" and row.is_active and not row.parent_id
        ]
        if todo:
            await self.enrich_batch(todo)

    async def _vectors(self, rows: Sequence[MemoryRecord]) -> dict[str, Vector]:
        """Each memory's vector; a chunked one is represented by the mean direction of its
        chunks (read for the whole batch in one query)."""
        out = {r.id: from_bytes(bytes(r.embedding)) for r in rows if r.embedding is not None}
        chunked = [r.id for r in rows if r.embedding is None]
        if chunked:
            async with self._pool.connection() as conn:
                by_parent = await repository.chunk_embeddings_of(conn, chunked)
            for memory_id, vectors in by_parent.items():
                stacked = np.stack([from_bytes(v) for v in vectors])
                out[memory_id] = _unit(np.mean(stacked, axis=0).astype(np.float32))
        return out

    async def _neighbours(
        self, rows: Sequence[MemoryRecord], vectors: dict[str, Vector], limits: Thresholds
    ) -> dict[str, list[Neighbour]]:
        """One nearest-neighbour call per namespace for the whole batch."""
        by_namespace: dict[str, list[MemoryRecord]] = {}
        for row in rows:
            if row.id in vectors:
                by_namespace.setdefault(row.namespace, []).append(row)
        out: dict[str, list[Neighbour]] = {}
        for namespace, group in by_namespace.items():
            # A failure here (retrieval away) fails the batch; it is redelivered later.
            found = await self._retrieval.nearest(
                [vectors[r.id] for r in group],
                namespace=namespace,
                limit=limits.neighbours,
                min_similarity=min(limits.relation, limits.contradiction),
                exclude_ids=[[r.id] for r in group],
                background=True,  # waits for searches to pause (see retrieval's priority)
            )
            for i, row in enumerate(group):
                out[row.id] = _roots(found[i] if i < len(found) else [], row.id)
        return out

    async def enrich(self, row: MemoryRecord) -> None:
        await self.enrich_batch([row])

    async def enrich_batch(self, rows: Sequence[MemoryRecord]) -> None:
        """Enrich ``rows`` together: one nearest-neighbour call (per namespace), one look-up
        of the goals (per namespace), one transaction and one batch of outbox events. Each
        memory is still enriched only if it is pending at the version read (checked under a
        row lock in that transaction)."""
        started = time.perf_counter()
        settings = await self._settings.get()
        limits = Thresholds.from_settings(settings)
        found = {
            row.id: [
                e for e in extract_entities(row.content) if e.confidence >= limits.entity_confidence
            ]
            for row in rows
        }
        vectors = await self._vectors(rows)
        neighbours = await self._neighbours(rows, vectors, limits)
        goals = await self._goal_matches_batch(rows, vectors, limits)
        contexts_of = {row.id: await self._context(row, limits) for row in rows}

        # Memories whose keywords changed (a new version and an ``enriched`` event each), and
        # how many were enriched in all.
        enriched: list[tuple[str, int, str]] = []
        done = 0
        async with self._pool.connection() as conn, conn.transaction():
            current = await repository.lock_statuses(conn, [row.id for row in rows])
            # The rows contradictions are looked for in, read once for the batch.
            close = {
                n.root_id
                for near in neighbours.values()
                for n in near
                if n.similarity >= limits.contradiction
            }
            others = await memories.get_records(conn, sorted(close)) if close else {}
            # Results that leave the keywords as they are, recorded together after the loop.
            in_place: list[tuple[str, bytes | None]] = []
            for row in rows:
                now = current.get(row.id)
                if (
                    now is None
                    or now["enrichment_status"] != "pending"
                    or int(now["version"]) != row.version
                ):
                    continue  # deleted, done already, or changed since: its own event follows
                entities = found[row.id]
                relationships = extract_relationships(row.content, entities)
                entity_ids = await repository.replace_mentions(
                    conn, row.id, row.namespace, entities
                )
                await repository.add_relationships(conn, row.id, entity_ids, relationships)
                # Before the similarity links: for a memory that is both, "elaborates" says
                # more, and an existing link is never overwritten.
                hierarchy = await links.insert_missing(
                    conn, await temporal.temporal_links(conn, row)
                )
                near = neighbours.get(row.id, [])
                related = [n for n in near if n.similarity >= limits.relation]
                await links.insert_missing(
                    conn,
                    [
                        (row.id, n.root_id, "related", round(n.similarity, 2))
                        for n in related[: limits.relation_limit]
                    ],
                )
                contradictions = await self._contradictions(conn, row, near, limits, others)
                for goal_id, similarity in goals.get(row.id, []):
                    await repository.link_goal(conn, goal_id, row.id, round(similarity, 3))
                keywords = generate_keywords(row.content, row.tags, [e.name for e in entities])
                if keywords == row.keywords:
                    # The write path named these entities already (core.domain.keywords): the
                    # indexes hold what they need, so no new version and no event for them.
                    in_place.append((row.id, contexts_of[row.id]))
                else:
                    version = await repository.mark_enriched(
                        conn, row.id, keywords, contexts_of[row.id]
                    )
                    enriched.append((row.id, version, row.namespace))
                done += 1
                log.info(
                    "memory enriched",
                    memory_id=row.id,
                    entities=len(entities),
                    links=min(len(related), limits.relation_limit),
                    contradictions=contradictions,
                    goals=len(goals.get(row.id, [])),
                    elaborates=hierarchy,
                )
            await repository.mark_enriched_in_place(conn, in_place)
            await bulk.enqueue_events(
                conn,
                [
                    (subjects.MEMORY_ENRICHED, events.enriched(*item), outbox_headers())
                    for item in enriched
                ],
            )
        metrics.ENRICHED.inc(done)
        if done:
            elapsed = time.perf_counter() - started
            for _ in range(done):
                metrics.ENRICH_DURATION.observe(elapsed / done)

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
        # Background work: behind any single write's text waiting for the model.
        return to_bytes((await self._embedder.embed([text], bulk=True))[0])

    async def _contradictions(
        self,
        conn: DictConnection,
        row: MemoryRecord,
        neighbours: list[Neighbour],
        limits: Thresholds,
        others: Mapping[str, MemoryRecord],
    ) -> int:
        """Contradiction candidates between ``row`` and its close neighbours (``others``: their
        rows, read for the whole batch)."""
        close = [n for n in neighbours if n.similarity >= limits.contradiction]
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

    async def _goal_matches_batch(
        self, rows: Sequence[MemoryRecord], vectors: dict[str, Vector], limits: Thresholds
    ) -> dict[str, list[tuple[str, float]]]:
        """Active goals each memory advances, by cosine to "title: description" (the goals of
        a namespace read once for the batch). No tags are added (the seed's goal-progress
        tags made the memory a metadata artifact)."""
        out: dict[str, list[tuple[str, float]]] = {}
        by_namespace: dict[str, list[MemoryRecord]] = {}
        for row in rows:
            if row.id in vectors:
                by_namespace.setdefault(row.namespace, []).append(row)
        for namespace, group in by_namespace.items():
            goals = await self._goals(namespace)
            if not goals:
                continue
            units = [_unit(from_bytes(bytes(g["embedding"]))) for g in goals]
            for row in group:
                unit = _unit(vectors[row.id])
                matches = []
                for goal, goal_unit in zip(goals, units, strict=True):
                    similarity = float(np.dot(unit, goal_unit))
                    if similarity >= limits.goal:
                        matches.append((goal["id"], similarity))
                out[row.id] = matches
        return out

    async def _goals(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's active goals, each with its embedding (made and kept when missing)."""
        async with self._pool.connection() as conn:
            goals = await repository.active_goals(conn, namespace)
        missing = [g for g in goals if g["embedding"] is None]
        if missing:
            texts = [f"{g['title']}: {g['description'] or ''}".strip(": ") for g in missing]
            vectors = await self._embedder.embed(texts, bulk=True)
            async with self._pool.connection() as conn:
                for goal, goal_vector in zip(missing, vectors, strict=True):
                    await repository.save_goal_embedding(
                        conn, goal["id"], to_bytes(goal_vector), self._embedder.fingerprint
                    )
                    goal["embedding"] = to_bytes(goal_vector)
        return goals


def outbox_headers() -> dict[str, str]:
    cid = current_correlation_id()
    return {subjects.CORRELATION_HEADER: cid} if cid else {}


def _roots(hits: list[Neighbour], own_id: str) -> list[Neighbour]:
    """Chunk hits stand for their memory; keep each memory once at its best similarity."""
    seen: dict[str, Neighbour] = {}
    for hit in hits:
        root = hit.root_id
        if root != own_id and root not in seen:
            seen[root] = Neighbour(root, None, hit.similarity)
    return list(seen.values())
