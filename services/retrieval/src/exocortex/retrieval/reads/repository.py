"""Every query of the memory reads: by id (recording a use), lists, namespaces, the diff since a
time and the links of a memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import sql
from psycopg.rows import class_row

from exocortex.core.db.pool import Pool
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import memories

# A fetch within this window after a search served the memory counts as useful, once. The
# impression row is consumed by the same statement, so two processes cannot both count it. A
# fetch that finds no fresh impression is kept in pending_fetches: the search that served it may
# not be recorded yet (the recorder batches), and it counts the fetch when it is (see
# maintenance's recorder).
_USE_SQL = """
WITH served AS (
    DELETE FROM search_impressions
     WHERE memory_id = ANY(%(ids)s)
 RETURNING memory_id, served_at > now() - interval '5 minutes' AS fresh
), counted AS (
    UPDATE memories m SET useful_count = m.useful_count + 1
      FROM served s
     WHERE m.id = s.memory_id AND s.fresh
)
INSERT INTO pending_fetches (memory_id, fetched_at)
SELECT m.id, now() FROM memories m
 WHERE m.id = ANY(%(ids)s)
   AND m.id NOT IN (SELECT memory_id FROM served WHERE fresh)
    ON CONFLICT (memory_id) DO UPDATE SET fetched_at = EXCLUDED.fetched_at
"""

_LINKS_SQL = """
SELECT l.target_id AS other, l.link_type, l.strength, 'outgoing' AS direction,
       l.created_at
  FROM memory_links l WHERE l.source_id = %(id)s
UNION ALL
SELECT l.source_id, l.link_type, l.strength, 'incoming', l.created_at
  FROM memory_links l WHERE l.target_id = %(id)s
ORDER BY strength DESC, other
"""

_DIFF_PARTS = {
    "created": "m.is_active AND m.created_at > %(since)s",
    "updated": "m.is_active AND m.updated_at > %(since)s AND m.created_at <= %(since)s",
    "archived": "NOT m.is_active AND m.updated_at > %(since)s AND m.created_at <= %(since)s",
}


@dataclass(frozen=True)
class ListFilter:
    """Which memories a list shows (validated by the read service)."""

    archived: bool
    namespace: str | None
    limit: int
    offset: int
    tags: tuple[str, ...] = ()
    content_type: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    min_importance: float | None = None


@dataclass(frozen=True)
class LinkRow:
    other: str
    link_type: str
    strength: float
    direction: str
    created_at: datetime


async def get(pool: Pool, ids: Sequence[str], *, record_use: bool) -> dict[str, MemoryRecord]:
    """The rows of ``ids`` that exist; with ``record_use`` the fetch counts as a use first."""
    async with pool.connection() as conn:
        if record_use and ids:
            async with conn.transaction():
                # Every recorded fetch writes a row; a use is a soft ranking signal, so a
                # read does not wait for the WAL to reach the disk (a crash may lose the
                # last moment of uses, never a memory).
                await conn.execute("SET LOCAL synchronous_commit = off")
                await conn.execute(_USE_SQL, {"ids": list(ids)})
        return await memories.get_records(conn, ids)


async def page(pool: Pool, f: ListFilter) -> tuple[list[MemoryRecord], int]:
    """One page of the list and how many memories the whole list holds."""
    where: list[sql.Composable] = []
    params: dict[str, Any] = {"limit": f.limit, "offset": f.offset}
    if f.archived:
        where.append(sql.SQL("NOT m.is_active"))
        order = sql.SQL("m.updated_at DESC, m.id DESC")
    else:
        where.append(sql.SQL("m.is_active"))
        order = sql.SQL("m.created_at DESC, m.id DESC")
    # Chunks are parts of a memory, not memories: lists show the memory itself.
    where.append(sql.SQL("m.parent_id IS NULL"))
    if f.namespace is not None:
        where.append(sql.SQL("m.namespace = %(ns)s"))
        params["ns"] = f.namespace
    if f.tags:
        where.append(
            sql.SQL(
                "EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id "
                "AND t.tag = ANY(%(tags)s))"
            )
        )
        params["tags"] = list(f.tags)
    if f.content_type is not None:
        where.append(sql.SQL("m.content_type = %(ct)s"))
        params["ct"] = f.content_type
    if f.after is not None:
        where.append(sql.SQL("m.created_at >= %(after)s"))
        params["after"] = f.after
    if f.before is not None:
        where.append(sql.SQL("m.created_at < %(before)s"))
        params["before"] = f.before
    if f.min_importance is not None:
        where.append(sql.SQL("m.importance >= %(mi)s"))
        params["mi"] = f.min_importance
    clause = sql.SQL(" AND ").join(where)
    query = sql.SQL(
        "{select} WHERE {clause} ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s"
    ).format(select=sql.SQL(memories.SELECT_MEMORY), clause=clause, order=order)
    count = sql.SQL("SELECT count(*) AS n FROM memories m WHERE {clause}").format(clause=clause)
    async with pool.connection() as conn:
        async with conn.cursor(row_factory=class_row(MemoryRecord)) as cur:
            await cur.execute(query, params)
            rows = await cur.fetchall()
        total_row = await (await conn.execute(count, params)).fetchone()
    return rows, int(total_row["n"]) if total_row else 0


async def namespaces(pool: Pool) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT namespace FROM memories WHERE is_active ORDER BY namespace"
        )
        return [r["namespace"] for r in await cur.fetchall()]


async def diff(
    pool: Pool, since: datetime, limit: int, namespace: str | None
) -> dict[str, list[MemoryRecord]]:
    """Root memories created, updated and archived after ``since``, newest change first."""
    ns = sql.SQL("AND m.namespace = %(ns)s") if namespace is not None else sql.SQL("")
    params = {"since": since, "limit": limit, "ns": namespace}
    out: dict[str, list[MemoryRecord]] = {}
    async with pool.connection() as conn:
        for name, condition in _DIFF_PARTS.items():
            stmt = sql.SQL(
                "{select} WHERE {cond} {ns} AND m.parent_id IS NULL "
                "ORDER BY m.updated_at DESC, m.id DESC LIMIT %(limit)s"
            ).format(select=sql.SQL(memories.SELECT_MEMORY), cond=sql.SQL(condition), ns=ns)
            async with conn.cursor(row_factory=class_row(MemoryRecord)) as cur:
                await cur.execute(stmt, params)
                out[name] = await cur.fetchall()
    return out


async def links(pool: Pool, memory_id: str) -> tuple[list[LinkRow], dict[str, MemoryRecord]] | None:
    """The memory's links (both directions) and the rows of the memories at their other end;
    None when the memory does not exist within the caller's scope."""
    async with pool.connection() as conn:
        if await memories.get_record(conn, memory_id) is None:
            return None
        async with conn.cursor(row_factory=class_row(LinkRow)) as cur:
            await cur.execute(_LINKS_SQL, {"id": memory_id})
            rows = await cur.fetchall()
        others = await memories.get_records(conn, [r.other for r in rows])
    return rows, others
