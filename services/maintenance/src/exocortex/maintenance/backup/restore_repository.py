"""The SQL of a restore: each section's batch inserted as it was exported (ids, versions and
timestamps kept) with ``ON CONFLICT DO NOTHING``, so a second restore of the same backup changes
nothing. A row whose reference is missing is left out rather than failing its batch.

Every statement takes the batch as one JSON array (``%(rows)s``) and reads it with
``jsonb_to_recordset``; it returns the keys it inserted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from exocortex.core.db import outbox
from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]
# What the database raises for a row it cannot take (a value of the wrong type, a constraint):
# the restore then retries that batch item by item, so one bad item fails alone.
RowRejected = psycopg.Error

_MEMORY_RECORD = """
    id text, namespace text, content text, content_type text, source text, source_uri text,
    importance float8, valence float8, is_active bool, is_metadata bool, parent_id text,
    chunk_index int, content_hash text, keywords text, embedding_model text,
    useful_count int, expires_at timestamptz, provider text, model_id text, model_name text,
    agent text, session_id text, conversation_id text, metadata jsonb, enrichment_status text,
    created_at timestamptz, updated_at timestamptz, version bigint,
    vector bytea, embedding_dim int
"""
_MEMORY_COLUMNS = """
    id, namespace, content, content_type, source, source_uri, importance, valence, is_active,
    is_metadata, parent_id, chunk_index, content_hash, keywords, embedding_model, useful_count,
    expires_at, provider, model_id, model_name, agent, session_id, conversation_id, metadata,
    enrichment_status, created_at, updated_at, version
"""

# The embedding comes in each row as "vector" (bytea text, "\\x…") with its "embedding_dim", so
# a restored row is written once. Roots first, then the rows under them (a parent restored by
# the first statement is visible to the second). Consolidation and supersession links are set
# once every memory is in.
INSERT_MEMORIES = f"""
INSERT INTO memories ({_MEMORY_COLUMNS}, embedding, embedding_dim)
SELECT {_MEMORY_COLUMNS}, vector, embedding_dim
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r({_MEMORY_RECORD})
 WHERE (r.parent_id IS NULL) = %(roots)s
   AND (r.parent_id IS NULL OR EXISTS (SELECT 1 FROM memories p WHERE p.id = r.parent_id))
ON CONFLICT DO NOTHING
RETURNING id
"""

EXISTING_MEMORIES = """
SELECT id, version, updated_at FROM memories WHERE id = ANY(%(ids)s)
"""

INSERT_TAGS = """
INSERT INTO memory_tags (memory_id, tag)
SELECT r.id, t.tag
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, tags text[])
 CROSS JOIN LATERAL unnest(r.tags) AS t(tag)
 WHERE r.id = ANY(%(ids)s)
ON CONFLICT DO NOTHING
"""

INSERT_USAGE = """
INSERT INTO memory_usage (memory_id, access_count, last_accessed_at)
SELECT r.id, r.access_count, r.last_accessed_at
  FROM jsonb_to_recordset(%(rows)s::jsonb)
       AS r(id text, access_count int, last_accessed_at timestamptz)
 WHERE r.id = ANY(%(ids)s) AND (r.access_count > 0 OR r.last_accessed_at IS NOT NULL)
ON CONFLICT DO NOTHING
"""

ABSENT = """
SELECT r.id FROM unnest(%(ids)s::text[]) AS r(id)
 WHERE NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = r.id)
"""

# Only fills what is empty: a memory restored earlier whose summary or newer version was not
# there yet (another document, an interrupted import) gets it now; set links are kept.
SET_LINEAGE = """
UPDATE memories m
   SET consolidated_into = coalesce(m.consolidated_into,
           CASE WHEN EXISTS (SELECT 1 FROM memories t WHERE t.id = r.ci) THEN r.ci END),
       superseded_by = coalesce(m.superseded_by,
           CASE WHEN EXISTS (SELECT 1 FROM memories t WHERE t.id = r.sb) THEN r.sb END)
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, ci text, sb text)
 WHERE m.id = r.id
   AND ((m.consolidated_into IS NULL AND r.ci IS NOT NULL)
        OR (m.superseded_by IS NULL AND r.sb IS NOT NULL))
"""

CHANGED = """
SELECT m.id, m.version, m.namespace,
       coalesce(array(SELECT c.id FROM memories c
                       WHERE c.parent_id = m.id AND c.chunk_index IS NOT NULL
                       ORDER BY c.chunk_index), '{}') AS chunk_ids
  FROM memories m WHERE m.id = ANY(%(ids)s) AND m.parent_id IS NULL
"""

# (section, statement returning the inserted keys as "key"). Rows whose references are missing
# are filtered out by the WHERE clauses.
SECTION_SQL: dict[str, str] = {
    "memory_links": """
INSERT INTO memory_links (source_id, target_id, link_type, strength, created_at)
SELECT r.source_id, r.target_id, r.link_type, r.strength, r.created_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(source_id text, target_id text,
       link_type text, strength float8, created_at timestamptz)
 WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = r.source_id)
   AND EXISTS (SELECT 1 FROM memories m WHERE m.id = r.target_id)
ON CONFLICT DO NOTHING
RETURNING source_id || '→' || target_id AS key
""",
    "entities": """
WITH added AS (
    INSERT INTO entities (id, namespace, name, type, aliases, metadata, created_at, updated_at)
    SELECT r.id, r.namespace, r.name, r.type, r.aliases, r.metadata, r.created_at, r.updated_at
      FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, namespace text, name text,
           type text, aliases jsonb, metadata jsonb, created_at timestamptz,
           updated_at timestamptz)
    ON CONFLICT DO NOTHING
    RETURNING id
), tagged AS (
    INSERT INTO entity_tags (entity_id, tag)
    SELECT r.id, t.tag
      FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, tags text[])
     CROSS JOIN LATERAL unnest(r.tags) AS t(tag)
     WHERE r.id IN (SELECT id FROM added)
    ON CONFLICT DO NOTHING
)
SELECT id AS key FROM added
""",
    "memory_entities": """
INSERT INTO memory_entities (memory_id, entity_id, relevance)
SELECT r.memory_id, r.entity_id, r.relevance
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(memory_id text, entity_id text,
       relevance float8)
 WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = r.memory_id)
   AND EXISTS (SELECT 1 FROM entities e WHERE e.id = r.entity_id)
ON CONFLICT DO NOTHING
RETURNING memory_id || '→' || entity_id AS key
""",
    "entity_relationships": """
INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, relationship,
                                  confidence, memory_id, context, created_at)
SELECT r.id, r.source_entity_id, r.target_entity_id, r.relationship, r.confidence,
       CASE WHEN EXISTS (SELECT 1 FROM memories m WHERE m.id = r.memory_id)
            THEN r.memory_id END,
       r.context, r.created_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, source_entity_id text,
       target_entity_id text, relationship text, confidence float8, memory_id text,
       context text, created_at timestamptz)
 WHERE EXISTS (SELECT 1 FROM entities e WHERE e.id = r.source_entity_id)
   AND EXISTS (SELECT 1 FROM entities e WHERE e.id = r.target_entity_id)
ON CONFLICT DO NOTHING
RETURNING id AS key
""",
    "goals": """
INSERT INTO goals (id, namespace, title, description, status, priority, deadline, metadata,
                   completed_at, created_at, updated_at)
SELECT r.id, r.namespace, r.title, r.description, r.status, r.priority, r.deadline,
       r.metadata, r.completed_at, r.created_at, r.updated_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, namespace text, title text,
       description text, status text, priority text, deadline timestamptz, metadata jsonb,
       completed_at timestamptz, created_at timestamptz, updated_at timestamptz)
ON CONFLICT DO NOTHING
RETURNING id AS key
""",
    "goal_milestones": """
INSERT INTO goal_milestones (id, goal_id, title, status, sort_order, deadline, completed_at,
                             created_at, updated_at)
SELECT r.id, r.goal_id, r.title, r.status, r.sort_order, r.deadline, r.completed_at,
       r.created_at, r.updated_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, goal_id text, title text,
       status text, sort_order int, deadline timestamptz, completed_at timestamptz,
       created_at timestamptz, updated_at timestamptz)
 WHERE EXISTS (SELECT 1 FROM goals g WHERE g.id = r.goal_id)
ON CONFLICT DO NOTHING
RETURNING id AS key
""",
    "goal_links": """
INSERT INTO goal_links (goal_id, memory_id, relevance, kind, created_at)
SELECT r.goal_id, r.memory_id, r.relevance, r.kind, r.created_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(goal_id text, memory_id text,
       relevance float8, kind text, created_at timestamptz)
 WHERE EXISTS (SELECT 1 FROM goals g WHERE g.id = r.goal_id)
   AND EXISTS (SELECT 1 FROM memories m WHERE m.id = r.memory_id)
ON CONFLICT DO NOTHING
RETURNING goal_id || '→' || memory_id AS key
""",
    "contradictions": """
INSERT INTO contradictions (id, memory_a_id, memory_b_id, description, kind, score, status,
                            resolution, created_at, updated_at)
SELECT r.id, r.memory_a_id, r.memory_b_id, r.description, r.kind, r.score, r.status,
       r.resolution, r.created_at, r.updated_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, memory_a_id text, memory_b_id text,
       description text, kind text, score float8, status text, resolution text,
       created_at timestamptz, updated_at timestamptz)
 WHERE EXISTS (SELECT 1 FROM memories m WHERE m.id = r.memory_a_id)
   AND EXISTS (SELECT 1 FROM memories m WHERE m.id = r.memory_b_id)
ON CONFLICT DO NOTHING
RETURNING id AS key
""",
    "consolidations": """
INSERT INTO consolidations (id, namespace, summary_id, source_ids, strategy, memories_merged,
                            created_at)
SELECT r.id, r.namespace,
       CASE WHEN EXISTS (SELECT 1 FROM memories m WHERE m.id = r.summary_id)
            THEN r.summary_id END,
       r.source_ids, r.strategy, r.memories_merged, r.created_at
  FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(id text, namespace text, summary_id text,
       source_ids text[], strategy text, memories_merged int, created_at timestamptz)
ON CONFLICT DO NOTHING
RETURNING id AS key
""",
}

# A setting whose value is masked in the backup (a secret) is never written.
UPSERT_SETTINGS = """
WITH given AS (
    SELECT key, value FROM jsonb_each_text(%(settings)s::jsonb)
     WHERE value NOT LIKE '%%••••%%'
), before AS (
    SELECT s.key, s.value FROM settings s JOIN given g USING (key)
), written AS (
    INSERT INTO settings AS s (key, value)
    SELECT key, value FROM given
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()
     WHERE s.value IS DISTINCT FROM EXCLUDED.value
    RETURNING s.key
)
SELECT g.key,
       CASE WHEN b.key IS NULL THEN 'created'
            WHEN b.value = g.value THEN 'skipped'
            ELSE 'updated' END AS outcome
  FROM given g LEFT JOIN before b USING (key)
"""


async def insert_memories(conn: Conn, rows: list[dict[str, Any]], *, roots: bool) -> set[str]:
    cur = await conn.execute(INSERT_MEMORIES, {"rows": Jsonb(rows), "roots": roots})
    return {r["id"] for r in await cur.fetchall()}


async def existing_memories(conn: Conn, ids: list[str]) -> dict[str, dict[str, Any]]:
    cur = await conn.execute(EXISTING_MEMORIES, {"ids": TextArray(ids)})
    return {r["id"]: r for r in await cur.fetchall()}


async def add_tags_and_usage(conn: Conn, rows: list[dict[str, Any]], ids: set[str]) -> None:
    params = {"rows": Jsonb(rows), "ids": TextArray(sorted(ids))}
    await conn.execute(INSERT_TAGS, params)
    await conn.execute(INSERT_USAGE, params)


async def absent(conn: Conn, ids: list[str]) -> set[str]:
    """The ids no memory has yet (the rows a restore may create)."""
    cur = await conn.execute(ABSENT, {"ids": TextArray(ids)})
    return {r["id"] for r in await cur.fetchall()}


async def set_lineage(conn: Conn, rows: list[dict[str, Any]]) -> None:
    await conn.execute(SET_LINEAGE, {"rows": Jsonb(rows)})


async def announce(conn: Conn, ids: list[str], event: Any) -> None:
    """A stored event per restored root memory (with its chunks), in the same transaction, so
    the indexes pick the memories up as they do any store. One insert for the batch's events
    and one notification to the relay (``outbox.enqueue`` writes one event at a time)."""
    cur = await conn.execute(CHANGED, {"ids": TextArray(ids)})
    events = [event(row) for row in await cur.fetchall()]
    if not events:
        return
    await conn.execute(
        "INSERT INTO outbox (subject, payload, headers) SELECT s, p, '{}'::jsonb"
        " FROM unnest(%(subjects)s::text[], %(payloads)s::bytea[]) AS e(s, p)",
        {"subjects": TextArray(s for s, _ in events), "payloads": [p for _, p in events]},
    )
    await conn.execute("SELECT pg_notify(%s, '')", (outbox.NOTIFY_CHANNEL,))


async def insert_section(conn: Conn, section: str, rows: list[dict[str, Any]]) -> set[str]:
    cur = await conn.execute(SECTION_SQL[section], {"rows": Jsonb(rows)})
    return {str(r["key"]) for r in await cur.fetchall()}


async def upsert_settings(conn: Conn, settings: dict[str, str]) -> dict[str, str]:
    cur = await conn.execute(UPSERT_SETTINGS, {"settings": Jsonb(settings)})
    return {r["key"]: r["outcome"] for r in await cur.fetchall()}


async def context_candidates(conn: Conn, ids: list[str]) -> list[tuple[str, str, datetime]]:
    """(id, content, created_at) of the restored root memories that can have a contextual
    vector: active, with a vector of their own (not chunked), arrival order."""
    cur = await conn.execute(
        "SELECT id, content, created_at FROM memories WHERE id = ANY(%(ids)s) "
        "AND parent_id IS NULL AND is_active AND embedding IS NOT NULL ORDER BY id",
        {"ids": TextArray(ids)},
    )
    return [(r["id"], r["content"], r["created_at"]) for r in await cur.fetchall()]
