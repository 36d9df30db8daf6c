"""Reads of memories straight from Postgres: by id, recent/browse/archived lists, namespaces,
diff since a time, and the links of a memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import AsyncConnectionPool

from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.repositories import memories

Row = dict[str, Any]
MAX_IDS = 100
MAX_LIST = 100
MAX_DIFF = 200
# recent and browse are the same list (browse is the agents' name for it).
VIEWS = ("recent", "browse", "archived")

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


@dataclass
class ListQuery:
    view: str = "recent"
    namespace: str | None = None
    limit: int = 20
    offset: int = 0
    tags: tuple[str, ...] = ()
    content_type: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    min_importance: float | None = None


@dataclass
class Link:
    memory_id: str
    link_type: str
    strength: float
    direction: str
    created_at: datetime
    preview: Row


class ReadService:
    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]) -> None:
        self._pool = pool

    async def get_memories(
        self, ids: list[str], *, record_use: bool = False
    ) -> tuple[list[Row], list[str]]:
        """Rows in the order asked for, and the ids that do not exist."""
        if len(ids) > MAX_IDS:
            raise InvalidArgument(f"at most {MAX_IDS} ids per call", field="ids")
        unique = list(dict.fromkeys(ids))
        async with self._pool.connection() as conn:
            if record_use and unique:
                async with conn.transaction():
                    # Every recorded fetch writes a row; a use is a soft ranking signal, so a
                    # read does not wait for the WAL to reach the disk (a crash may lose the
                    # last moment of uses, never a memory).
                    await conn.execute("SET LOCAL synchronous_commit = off")
                    await conn.execute(_USE_SQL, {"ids": unique})
            rows = await memories.get_many(conn, unique)
        found = [rows[i] for i in unique if i in rows]
        missing = [i for i in unique if i not in rows]
        return found, missing

    async def list_memories(self, q: ListQuery) -> tuple[list[Row], int]:
        if q.view not in VIEWS:
            raise InvalidArgument(f"view must be one of {', '.join(VIEWS)}", field="view")
        if not 1 <= q.limit <= MAX_LIST:
            raise InvalidArgument(f"limit must be between 1 and {MAX_LIST}", field="limit")
        if q.offset < 0:
            raise InvalidArgument("offset must not be negative", field="offset")
        where: list[sql.Composable] = []
        params: dict[str, Any] = {"limit": q.limit, "offset": q.offset}
        if q.view == "archived":
            where.append(sql.SQL("NOT m.is_active"))
            order = sql.SQL("m.updated_at DESC, m.id DESC")
        else:
            where.append(sql.SQL("m.is_active"))
            order = sql.SQL("m.created_at DESC, m.id DESC")
        # Chunks are parts of a memory, not memories: lists show the memory itself.
        where.append(sql.SQL("m.parent_id IS NULL"))
        if q.namespace is not None:
            where.append(sql.SQL("m.namespace = %(ns)s"))
            params["ns"] = q.namespace
        if q.tags:
            where.append(
                sql.SQL(
                    "EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id "
                    "AND t.tag = ANY(%(tags)s))"
                )
            )
            params["tags"] = list(q.tags)
        if q.content_type is not None:
            where.append(sql.SQL("m.content_type = %(ct)s"))
            params["ct"] = q.content_type
        if q.after is not None:
            where.append(sql.SQL("m.created_at >= %(after)s"))
            params["after"] = q.after
        if q.before is not None:
            where.append(sql.SQL("m.created_at < %(before)s"))
            params["before"] = q.before
        if q.min_importance is not None:
            where.append(sql.SQL("m.importance >= %(mi)s"))
            params["mi"] = q.min_importance
        clause = sql.SQL(" AND ").join(where)
        query = sql.SQL(
            "{select} WHERE {clause} ORDER BY {order} LIMIT %(limit)s OFFSET %(offset)s"
        ).format(select=sql.SQL(memories.SELECT_MEMORY), clause=clause, order=order)
        count = sql.SQL("SELECT count(*) AS n FROM memories m WHERE {clause}").format(clause=clause)
        async with self._pool.connection() as conn:
            rows = await (await conn.execute(query, params)).fetchall()
            total_row = await (await conn.execute(count, params)).fetchone()
        return rows, int(total_row["n"]) if total_row else 0

    async def namespaces(self) -> list[str]:
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT DISTINCT namespace FROM memories WHERE is_active ORDER BY namespace"
            )
            return [r["namespace"] for r in await cur.fetchall()]

    async def diff(
        self, since: datetime, limit: int, namespace: str | None
    ) -> tuple[list[Row], list[Row], list[Row]]:
        """Created after `since` (active); updated after it but created before (active);
        archived after it (inactive, created before)."""
        if not 1 <= limit <= MAX_DIFF:
            raise InvalidArgument(f"limit must be between 1 and {MAX_DIFF}", field="limit")
        ns = sql.SQL("AND m.namespace = %(ns)s") if namespace is not None else sql.SQL("")
        params = {"since": since, "limit": limit, "ns": namespace}
        parts = {
            "created": "m.is_active AND m.created_at > %(since)s",
            "updated": "m.is_active AND m.updated_at > %(since)s AND m.created_at <= %(since)s",
            "archived": (
                "NOT m.is_active AND m.updated_at > %(since)s AND m.created_at <= %(since)s"
            ),
        }
        out: dict[str, list[Row]] = {}
        async with self._pool.connection() as conn:
            for name, condition in parts.items():
                stmt = sql.SQL(
                    "{select} WHERE {cond} {ns} AND m.parent_id IS NULL "
                    "ORDER BY m.updated_at DESC, m.id DESC LIMIT %(limit)s"
                ).format(select=sql.SQL(memories.SELECT_MEMORY), cond=sql.SQL(condition), ns=ns)
                out[name] = await (await conn.execute(stmt, params)).fetchall()
        return out["created"], out["updated"], out["archived"]

    async def links(self, memory_id: str) -> list[Link]:
        async with self._pool.connection() as conn:
            if await memories.get(conn, memory_id) is None:
                raise NotFound(f"memory {memory_id} not found", field="id")
            cur = await conn.execute(
                """
                SELECT l.target_id AS other, l.link_type, l.strength, 'outgoing' AS direction,
                       l.created_at
                  FROM memory_links l WHERE l.source_id = %(id)s
                UNION ALL
                SELECT l.source_id, l.link_type, l.strength, 'incoming', l.created_at
                  FROM memory_links l WHERE l.target_id = %(id)s
                ORDER BY strength DESC, other
                """,
                {"id": memory_id},
            )
            link_rows = await cur.fetchall()
            others = await memories.get_many(conn, [r["other"] for r in link_rows])
        return [
            Link(
                memory_id=r["other"],
                link_type=r["link_type"],
                strength=float(r["strength"]),
                direction=r["direction"],
                created_at=r["created_at"],
                preview=others[r["other"]],
            )
            for r in link_rows
            if r["other"] in others
        ]
