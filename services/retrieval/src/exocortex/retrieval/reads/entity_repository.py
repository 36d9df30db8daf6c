"""Every query of the knowledge-graph reads: entities (with their tags and memory counts), their
memories, their relationships and the edges between a set of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.rows import class_row

from exocortex.core import scope
from exocortex.core.db.pool import Pool
from exocortex.core.records import EntityRecord

_ENTITY_COLUMNS = """
    e.id, e.namespace, e.name, e.type, e.aliases, e.metadata, e.created_at, e.updated_at,
    coalesce(array(select t.tag from entity_tags t where t.entity_id = e.id order by t.tag),
             '{}'::text[]) AS tags,
    (SELECT count(*) FROM memory_entities me JOIN memories m ON m.id = me.memory_id
      WHERE me.entity_id = e.id AND m.is_active) AS memory_count
"""

# Both directions of an entity's relationships. Each joins two entities and, often, the memory
# that stated it (its context is that memory's words): a row is read only when every one of
# them lies within the caller's scope ({scope}: filled in by the functions below).
_RELATIONSHIPS_SQL = """
SELECT r.other, r.direction, r.relationship, r.context, r.confidence, r.memory_id
  FROM (SELECT r.target_entity_id AS other, 'outgoing' AS direction, r.relationship,
               r.context, r.confidence, r.memory_id, r.source_entity_id AS own
          FROM entity_relationships r WHERE r.source_entity_id = %s
        UNION ALL
        SELECT r.source_entity_id, 'incoming', r.relationship, r.context, r.confidence,
               r.memory_id, r.target_entity_id
          FROM entity_relationships r WHERE r.target_entity_id = %s) r
  JOIN entities e ON e.id = r.own
  JOIN entities o ON o.id = r.other
 WHERE {ends} AND {stated_by}
 ORDER BY r.confidence DESC, r.relationship, r.other
"""

_EDGES_SQL = """
SELECT r.source_entity_id AS source_id, r.target_entity_id AS target_id,
       r.relationship, r.confidence
  FROM entity_relationships r
  JOIN entities s ON s.id = r.source_entity_id
  JOIN entities t ON t.id = r.target_entity_id
 WHERE r.source_entity_id = ANY(%s) AND r.target_entity_id = ANY(%s) AND {ends}
   AND {stated_by}
 ORDER BY r.source_entity_id, r.target_entity_id, r.relationship
"""


@dataclass(frozen=True)
class RelationshipRow:
    other: str
    direction: str
    relationship: str
    context: str | None
    confidence: float
    memory_id: str | None


@dataclass(frozen=True)
class GraphEdge:
    source_id: str
    target_id: str
    relationship: str
    confidence: float


async def find(
    pool: Pool,
    *,
    namespace: str | None,
    type: str | None,
    tags: Sequence[str],
    query: str | None,
    limit: int,
    max_memories: int | None = None,
) -> list[EntityRecord]:
    """Entities by name order, filtered by namespace, type, any of the tags, a name or alias
    containing ``query`` and at most ``max_memories`` active memories linked."""
    where: list[sql.Composable] = [sql.SQL("TRUE")]
    params: dict[str, Any] = {"limit": limit}
    if namespace is not None:
        where.append(sql.SQL("e.namespace = %(ns)s"))
        params["ns"] = namespace
    if type is not None:
        where.append(sql.SQL("e.type = %(type)s"))
        params["type"] = type
    if tags:
        where.append(
            sql.SQL(
                "EXISTS (SELECT 1 FROM entity_tags t WHERE t.entity_id = e.id "
                "AND t.tag = ANY(%(tags)s))"
            )
        )
        params["tags"] = list(tags)
    if query:
        where.append(
            sql.SQL(
                "(lower(e.name) LIKE %(q)s OR EXISTS (SELECT 1 FROM "
                "jsonb_array_elements_text(e.aliases) a WHERE lower(a) LIKE %(q)s))"
            )
        )
        params["q"] = f"%{query.lower()}%"
    if max_memories is not None:
        where.append(
            sql.SQL(
                "(SELECT count(*) FROM memory_entities me JOIN memories m ON m.id = me.memory_id "
                "WHERE me.entity_id = e.id AND m.is_active) <= %(max_memories)s"
            )
        )
        params["max_memories"] = max_memories
    stmt = sql.SQL(
        "SELECT {cols} FROM entities e WHERE {where} ORDER BY lower(e.name), e.id LIMIT %(limit)s"
    ).format(cols=sql.SQL(_ENTITY_COLUMNS), where=sql.SQL(" AND ").join(where))
    async with pool.connection() as conn, conn.cursor(row_factory=class_row(EntityRecord)) as cur:
        await cur.execute(stmt, params)
        return await cur.fetchall()


async def in_namespace(pool: Pool, namespace: str | None, limit: int) -> list[EntityRecord]:
    """Entities by name order, in the namespace (every namespace with None)."""
    async with pool.connection() as conn, conn.cursor(row_factory=class_row(EntityRecord)) as cur:
        await cur.execute(
            f"SELECT {_ENTITY_COLUMNS} FROM entities e "
            "WHERE %(ns)s::text IS NULL OR e.namespace = %(ns)s "
            "ORDER BY lower(e.name), e.id LIMIT %(limit)s",
            {"ns": namespace, "limit": limit},
        )
        return await cur.fetchall()


async def tags(pool: Pool, namespace: str | None) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT t.tag FROM entity_tags t JOIN entities e ON e.id = t.entity_id "
            "WHERE %(ns)s::text IS NULL OR e.namespace = %(ns)s ORDER BY t.tag",
            {"ns": namespace},
        )
        return [r["tag"] for r in await cur.fetchall()]


async def get(pool: Pool, entity_id: str) -> EntityRecord | None:
    """The entity, or None also when it lies outside the caller's namespace scope."""
    cond, params = scope.sql_filter("e")
    async with pool.connection() as conn, conn.cursor(row_factory=class_row(EntityRecord)) as cur:
        await cur.execute(
            f"SELECT {_ENTITY_COLUMNS} FROM entities e WHERE e.id = %s AND {cond}",
            (entity_id, *params),
        )
        return await cur.fetchone()


async def memory_relevance(pool: Pool, entity_id: str, limit: int) -> list[tuple[str, float]]:
    """The entity's active memories within the caller's scope, most relevant first."""
    # An entity's memories are in its namespace, unless a link crossed over: keep to the
    # caller's scope all the same.
    cond, params = scope.sql_filter("m")
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"""
            SELECT me.memory_id, me.relevance FROM memory_entities me
              JOIN memories m ON m.id = me.memory_id
             WHERE me.entity_id = %s AND m.is_active AND {cond}
             ORDER BY me.relevance DESC, m.created_at DESC, m.id
             LIMIT %s
            """,
            (entity_id, *params, limit),
        )
        rows = await cur.fetchall()
    return [(r["memory_id"], float(r["relevance"])) for r in rows]


async def relationships(
    pool: Pool, entity_id: str
) -> tuple[list[RelationshipRow], dict[str, EntityRecord]]:
    """The entity's relationships (both directions) whose entities and stating memory lie
    within the caller's scope, and the entities at their other end."""
    ends, end_params = scope.sql_filter("e", "o")
    stated_by, memory_params = scope.sql_filter_memories("ARRAY[r.memory_id]")
    async with pool.connection() as conn:
        async with conn.cursor(row_factory=class_row(RelationshipRow)) as cur:
            await cur.execute(
                _RELATIONSHIPS_SQL.format(ends=ends, stated_by=stated_by),
                (entity_id, entity_id, *end_params, *memory_params),
            )
            rels = await cur.fetchall()
        cond, params = scope.sql_filter("e")
        async with conn.cursor(row_factory=class_row(EntityRecord)) as cur:
            await cur.execute(
                f"SELECT {_ENTITY_COLUMNS} FROM entities e WHERE e.id = ANY(%s) AND {cond}",
                ([r.other for r in rels], *params),
            )
            others = {e.id: e for e in await cur.fetchall()}
    return rels, others


async def edges(pool: Pool, ids: Sequence[str]) -> list[GraphEdge]:
    """The relationships between the given entities whose entities and stating memory lie
    within the caller's scope (as an entity's relationships are read: an edge said by a memory
    the caller cannot see would tell what that memory says)."""
    ends, end_params = scope.sql_filter("s", "t")
    stated_by, memory_params = scope.sql_filter_memories("ARRAY[r.memory_id]")
    async with pool.connection() as conn, conn.cursor(row_factory=class_row(GraphEdge)) as cur:
        await cur.execute(
            _EDGES_SQL.format(ends=ends, stated_by=stated_by),
            (list(ids), list(ids), *end_params, *memory_params),
        )
        return await cur.fetchall()
