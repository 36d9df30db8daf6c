"""All SQL of enrichment: the memory it enriches (its chunks' vectors, the status lock, the
result), and the derived knowledge it writes: entities, mentions, relationships, contradiction
candidates and implicit goal links."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from exocortex.core.domain.entities import Entity, Relationship
from exocortex.core.ids import new_id

Row = dict[str, Any]


async def chunk_embeddings(conn: AsyncConnection[Row], memory_id: str) -> list[bytes]:
    """The vectors of the memory's chunks (a chunked memory has none of its own)."""
    cur = await conn.execute(
        "SELECT embedding FROM memories WHERE parent_id = %s AND embedding IS NOT NULL",
        (memory_id,),
    )
    return [bytes(r["embedding"]) for r in await cur.fetchall()]


async def chunk_embeddings_of(
    conn: AsyncConnection[Row], memory_ids: list[str]
) -> dict[str, list[bytes]]:
    """The vectors of the chunks of each memory, in one query."""
    cur = await conn.execute(
        "SELECT parent_id, embedding FROM memories "
        "WHERE parent_id = ANY(%s) AND embedding IS NOT NULL",
        (memory_ids,),
    )
    out: dict[str, list[bytes]] = {}
    for r in await cur.fetchall():
        out.setdefault(r["parent_id"], []).append(bytes(r["embedding"]))
    return out


async def lock_statuses(conn: AsyncConnection[Row], memory_ids: list[str]) -> dict[str, Row]:
    """Lock the memories' rows (in id order, so two batches cannot deadlock): version and
    enrichment status by id (a memory that is gone is absent)."""
    cur = await conn.execute(
        "SELECT id, version, enrichment_status FROM memories WHERE id = ANY(%s) "
        "ORDER BY id FOR UPDATE",
        (sorted(memory_ids),),
    )
    return {r["id"]: r for r in await cur.fetchall()}


async def lock_status(conn: AsyncConnection[Row], memory_id: str) -> Row | None:
    """Lock the memory's row: its version and enrichment status (None: it is gone)."""
    cur = await conn.execute(
        "SELECT version, enrichment_status FROM memories WHERE id = %s FOR UPDATE", (memory_id,)
    )
    return await cur.fetchone()


async def mark_enriched(
    conn: AsyncConnection[Row], memory_id: str, keywords: str, context: bytes | None
) -> int:
    """Record the result (status done, new keywords, the contextual vector or none) at a new
    version, which it returns: one update of the row, not one per column."""
    cur = await conn.execute(
        "UPDATE memories SET enrichment_status = 'done', enriched_at = now(), "
        "keywords = %s, context_embedding = %s, updated_at = now(), version = version + 1 "
        "WHERE id = %s RETURNING version",
        (keywords, context, memory_id),
    )
    bumped = await cur.fetchone()
    assert bumped is not None
    return int(bumped["version"])


async def mark_enriched_in_place(
    conn: AsyncConnection[Row], results: Sequence[tuple[str, bytes | None]]
) -> None:
    """Record enrichments that left the keywords as they were, (memory id, contextual vector
    or none) each: status done and the contextual vector, at the same version, in one round
    trip. Nothing the indexes hold changed, so there is nothing for them to apply;
    ``updated_at`` stays too, the time of the memory's last change (``enriched_at`` then
    differs from it: see retrieval's ``enriched_last``)."""
    if not results:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE memories SET enrichment_status = 'done', enriched_at = now(), "
            "context_embedding = %s WHERE id = %s",
            [(context, memory_id) for memory_id, context in results],
        )


_MENTION_SQL = """
    WITH entity AS (
        INSERT INTO entities (id, namespace, name, type) VALUES (%s, %s, %s, %s)
        ON CONFLICT (namespace, lower(name)) DO UPDATE SET updated_at = now()
        RETURNING id
    )
    INSERT INTO memory_entities (memory_id, entity_id, relevance)
    SELECT %s, entity.id, %s FROM entity
    ON CONFLICT (memory_id, entity_id) DO UPDATE SET relevance = EXCLUDED.relevance
    RETURNING entity_id
"""


async def replace_mentions(
    conn: AsyncConnection[Row], memory_id: str, namespace: str, entities: list[Entity]
) -> dict[str, str]:
    """Upsert each entity (one per name per namespace) and make them the memory's mentions.
    Returns lower(name) → entity id."""
    await conn.execute("DELETE FROM memory_entities WHERE memory_id = %s", (memory_id,))
    ids: dict[str, str] = {}
    for entity in entities:
        # The entity and the mention in one statement (one round trip per entity, not two).
        cur = await conn.execute(
            _MENTION_SQL,
            (new_id(), namespace, entity.name, entity.type, memory_id, entity.confidence),
        )
        row = await cur.fetchone()
        assert row is not None
        ids[entity.name.lower()] = row["entity_id"]
    return ids


async def add_relationships(
    conn: AsyncConnection[Row],
    memory_id: str,
    entity_ids: dict[str, str],
    relationships: list[Relationship],
) -> None:
    for rel in relationships:
        source = entity_ids.get(rel.source.lower())
        target = entity_ids.get(rel.target.lower())
        if source is None or target is None:
            continue
        await conn.execute(
            """
            INSERT INTO entity_relationships
                (id, source_entity_id, target_entity_id, relationship, confidence, memory_id,
                 context)
            VALUES (%s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (source_entity_id, target_entity_id, relationship) DO NOTHING
            """,
            (new_id(), source, target, rel.relationship, rel.confidence, memory_id, rel.context),
        )


async def active_goals(conn: AsyncConnection[Row], namespace: str) -> list[Row]:
    cur = await conn.execute(
        "SELECT id, title, description, embedding, embedding_model FROM goals "
        "WHERE namespace = %s AND status = 'active'",
        (namespace,),
    )
    return list(await cur.fetchall())


async def save_goal_embedding(
    conn: AsyncConnection[Row], goal_id: str, embedding: bytes, model: str
) -> None:
    await conn.execute(
        "UPDATE goals SET embedding = %s, embedding_model = %s WHERE id = %s",
        (embedding, model, goal_id),
    )


async def link_goal(
    conn: AsyncConnection[Row], goal_id: str, memory_id: str, relevance: float
) -> None:
    """An implicit link; an explicit one a person made is never overwritten."""
    await conn.execute(
        "INSERT INTO goal_links (goal_id, memory_id, relevance, kind) "
        "VALUES (%s, %s, %s, 'implicit') ON CONFLICT (goal_id, memory_id) DO NOTHING",
        (goal_id, memory_id, relevance),
    )


# Episodes a summary elaborates on: important root memories of its window, not summaries.
_EPISODES = """
SELECT m.id FROM memories m
WHERE m.namespace = %(namespace)s AND m.id <> %(id)s AND m.parent_id IS NULL
  AND m.is_active AND NOT m.is_metadata AND m.importance >= %(min_importance)s
  AND m.created_at >= %(since)s AND m.created_at <= %(until)s
  AND NOT EXISTS (SELECT 1 FROM memory_tags t
                  WHERE t.memory_id = m.id AND t.tag IN ('epoch', 'narrative'))
ORDER BY m.importance DESC, m.created_at DESC, m.id
LIMIT %(cap)s
"""

_NARRATIVES = """
SELECT m.id FROM memories m
WHERE m.namespace = %(namespace)s AND m.id <> %(id)s AND m.parent_id IS NULL AND m.is_active
  AND m.created_at >= %(since)s AND m.created_at < %(until)s
  AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = 'narrative')
  AND NOT EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = 'epoch')
ORDER BY m.created_at, m.id
LIMIT %(cap)s
"""


async def episodes(
    conn: AsyncConnection[Row],
    namespace: str,
    own_id: str,
    *,
    min_importance: float,
    since: datetime,
    until: datetime,
    cap: int,
) -> list[str]:
    """Ids of the episodes in [since, until] (inclusive), most important first."""
    params = {
        "namespace": namespace,
        "id": own_id,
        "min_importance": min_importance,
        "since": since,
        "until": until,
        "cap": cap,
    }
    cur = await conn.execute(_EPISODES, params)
    return [r["id"] for r in await cur.fetchall()]


async def narratives(
    conn: AsyncConnection[Row],
    namespace: str,
    own_id: str,
    *,
    since: datetime,
    until: datetime,
    cap: int,
) -> list[str]:
    """Ids of the narratives created in [since, until), oldest first."""
    params = {"namespace": namespace, "id": own_id, "since": since, "until": until, "cap": cap}
    cur = await conn.execute(_NARRATIVES, params)
    return [r["id"] for r in await cur.fetchall()]
