"""The SQL of the Obsidian export: what changed since the last export, with everything a note
shows (tags, entity names, linked memories' titles), read in one snapshot with server-side
cursors so a large store streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg_pool import AsyncConnectionPool

Pool = AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]
BATCH = 500
TITLE_CHARS = 80

# Root memories that are not system artifacts; archived ones too, so their notes can move out.
MEMORIES = f"""
SELECT m.id, m.namespace, m.content, m.content_type, m.importance, m.valence, m.is_active,
       m.created_at, m.updated_at,
       coalesce(array(SELECT t.tag FROM memory_tags t WHERE t.memory_id = m.id ORDER BY t.tag),
                '{{}}') AS tags,
       coalesce((SELECT json_agg(json_build_object('name', e.name, 'namespace', e.namespace)
                                 ORDER BY e.name)
                   FROM memory_entities me JOIN entities e ON e.id = me.entity_id
                  WHERE me.memory_id = m.id), '[]'::json) AS entities,
       coalesce((SELECT json_agg(json_build_object(
                            'id', o.id, 'title', left(o.content, {TITLE_CHARS}),
                            'type', l.link_type) ORDER BY o.id)
                   FROM memory_links l
                   JOIN memories o ON o.id = CASE WHEN l.source_id = m.id
                                                 THEN l.target_id ELSE l.source_id END
                  WHERE (l.source_id = m.id OR l.target_id = m.id) AND o.is_active),
                '[]'::json) AS links
  FROM memories m
 WHERE m.parent_id IS NULL AND NOT m.is_metadata
   AND (%(since)s::timestamptz IS NULL OR m.updated_at > %(since)s::timestamptz)
 ORDER BY m.created_at, m.id
"""

ENTITIES = """
SELECT e.id, e.namespace, e.name, e.type, e.updated_at,
       coalesce((SELECT json_agg(json_build_object(
                            'relationship', r.relationship, 'name', o.name,
                            'namespace', o.namespace) ORDER BY r.relationship, o.name)
                   FROM entity_relationships r JOIN entities o ON o.id = r.target_entity_id
                  WHERE r.source_entity_id = e.id), '[]'::json) AS relations,
       coalesce((SELECT json_agg(json_build_object('id', x.id, 'title', x.title))
                   FROM (SELECT m.id, left(m.content, 80) AS title
                           FROM memory_entities me JOIN memories m ON m.id = me.memory_id
                          WHERE me.entity_id = e.id AND m.is_active AND m.parent_id IS NULL
                          ORDER BY me.relevance DESC, m.id LIMIT 200) x), '[]'::json) AS memories
  FROM entities e
 WHERE %(since)s::timestamptz IS NULL OR e.updated_at > %(since)s::timestamptz
    OR EXISTS (SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id
                WHERE me.entity_id = e.id AND m.updated_at > %(since)s::timestamptz)
 ORDER BY e.namespace, e.name
"""

GOALS = """
SELECT g.id, g.namespace, g.title, g.description, g.status, g.priority, g.deadline,
       g.created_at, g.updated_at,
       coalesce((SELECT json_agg(json_build_object(
                            'title', ms.title, 'done', ms.status = 'completed')
                            ORDER BY ms.sort_order, ms.id)
                   FROM goal_milestones ms WHERE ms.goal_id = g.id), '[]'::json) AS milestones
  FROM goals g
 WHERE %(since)s::timestamptz IS NULL OR g.updated_at > %(since)s::timestamptz
    OR EXISTS (SELECT 1 FROM goal_milestones ms
                WHERE ms.goal_id = g.id AND ms.updated_at > %(since)s::timestamptz)
 ORDER BY g.created_at, g.id
"""

CONTRADICTIONS = """
SELECT c.id, c.memory_a_id, c.memory_b_id, c.description, c.status, c.resolution,
       c.created_at, c.updated_at
  FROM contradictions c
 WHERE %(since)s::timestamptz IS NULL OR c.updated_at > %(since)s::timestamptz
 ORDER BY c.created_at, c.id
"""


@dataclass(frozen=True, slots=True)
class MemoryNote:
    id: str
    namespace: str
    content: str
    content_type: str
    importance: float
    valence: float
    is_active: bool
    created_at: datetime
    updated_at: datetime
    tags: list[str]
    entities: list[dict[str, str]]  # name, namespace
    links: list[dict[str, str]]  # id, title, type


@dataclass(frozen=True, slots=True)
class EntityNote:
    id: str
    namespace: str
    name: str
    type: str
    updated_at: datetime
    relations: list[dict[str, str]]  # relationship, name, namespace
    memories: list[dict[str, str]]  # id, title


@dataclass(frozen=True, slots=True)
class GoalNote:
    id: str
    namespace: str
    title: str
    description: str | None
    status: str
    priority: str
    deadline: datetime | None
    created_at: datetime
    updated_at: datetime
    milestones: list[dict[str, Any]]  # title, done


@dataclass(frozen=True, slots=True)
class ContradictionNote:
    id: str
    memory_a_id: str
    memory_b_id: str
    description: str
    status: str
    resolution: str | None
    created_at: datetime
    updated_at: datetime


class VaultSnapshot:
    """One read-only snapshot of the store for one export."""

    def __init__(self, conn: psycopg.AsyncConnection[dict[str, Any]], since: datetime | None):
        self._conn = conn
        self._params = {"since": since}

    async def now(self) -> datetime:
        cur = await self._conn.execute("SELECT now() AS now")
        row = await cur.fetchone()
        assert row is not None
        value: datetime = row["now"]
        return value

    async def _stream(self, cls: type[Any], sql: str, name: str) -> AsyncIterator[Any]:
        async with self._conn.cursor(name=name, row_factory=class_row(cls)) as cur:
            await cur.execute(sql, self._params)
            while rows := await cur.fetchmany(BATCH):
                for row in rows:
                    yield row

    def memories(self) -> AsyncIterator[MemoryNote]:
        return self._stream(MemoryNote, MEMORIES, "vault_memories")

    def entities(self) -> AsyncIterator[EntityNote]:
        return self._stream(EntityNote, ENTITIES, "vault_entities")

    def goals(self) -> AsyncIterator[GoalNote]:
        return self._stream(GoalNote, GOALS, "vault_goals")

    def contradictions(self) -> AsyncIterator[ContradictionNote]:
        return self._stream(ContradictionNote, CONTRADICTIONS, "vault_contradictions")


class ObsidianRepository:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @asynccontextmanager
    async def snapshot(self, since: datetime | None) -> AsyncIterator[VaultSnapshot]:
        async with self._pool.connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield VaultSnapshot(conn, since)
