"""Every query of the aggregate reads (stats, timeline, temporal stats, hierarchy)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from psycopg import AsyncConnection
from psycopg.rows import class_row

from exocortex.core import scope
from exocortex.core.db.pool import Pool
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import memories

Conn = AsyncConnection[Any]
_NS = "(%(ns)s::text IS NULL OR namespace = %(ns)s)"
# Time-bounded, active memories of a namespace (every namespace with None).
_HIERARCHY_WHERE = """m.is_active AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                   AND (%(after)s::timestamptz IS NULL OR m.created_at >= %(after)s)
                   AND (%(before)s::timestamptz IS NULL OR m.created_at < %(before)s)"""
_EPISODES_SQL = f"""{memories.SELECT_MEMORY}
    WHERE m.is_active AND NOT m.is_metadata AND m.parent_id IS NULL
      AND m.namespace = %(ns)s
      AND m.created_at >= %(start)s AND m.created_at < %(end)s
      AND NOT EXISTS (SELECT 1 FROM memory_tags t WHERE
          t.memory_id = m.id AND t.tag IN ('epoch', 'narrative'))
    ORDER BY m.importance DESC, m.created_at DESC LIMIT %(n)s"""


@dataclass(frozen=True)
class Counts:
    active: int
    archived: int
    chunks: int
    oldest: datetime | None
    newest: datetime | None
    by_content_type: dict[str, int]
    by_source: dict[str, int]
    entities: int
    tags: int


@dataclass(frozen=True)
class Hierarchy:
    epochs: list[MemoryRecord]
    themes: list[MemoryRecord]
    # Epochs and themes with an `elaborates` link.
    linked: set[str]
    episodes: dict[str, list[MemoryRecord]]


async def _records(conn: Conn, query: str, params: Any) -> list[MemoryRecord]:
    async with conn.cursor(row_factory=class_row(MemoryRecord)) as cur:
        await cur.execute(query, params)
        return await cur.fetchall()


async def counts(pool: Pool, namespace: str | None) -> Counts:
    """Real counts: a memory is an active root row; chunks and archived rows apart."""
    ns = {"ns": namespace}
    async with pool.connection() as conn:
        row = await (
            await conn.execute(
                f"""
                SELECT count(*) FILTER (WHERE is_active AND parent_id IS NULL) AS active,
                       count(*) FILTER (WHERE NOT is_active AND parent_id IS NULL) AS archived,
                       count(*) FILTER (WHERE parent_id IS NOT NULL) AS chunks,
                       min(created_at) FILTER (WHERE parent_id IS NULL) AS oldest,
                       max(created_at) FILTER (WHERE parent_id IS NULL) AS newest
                  FROM memories WHERE {_NS}
                """,
                ns,
            )
        ).fetchone()
        assert row is not None
        grouped = {}
        for column in ("content_type", "source"):
            grouped[column] = await (
                await conn.execute(
                    f"SELECT {column} AS k, count(*) AS n FROM memories WHERE {_NS} "
                    "AND is_active AND parent_id IS NULL GROUP BY 1 ORDER BY 1",
                    ns,
                )
            ).fetchall()
        entities = await (
            await conn.execute(f"SELECT count(*) AS n FROM entities WHERE {_NS}", ns)
        ).fetchone()
        tags = await (
            await conn.execute(
                "SELECT count(DISTINCT t.tag) AS n FROM memory_tags t "
                "JOIN memories m ON m.id = t.memory_id WHERE m.is_active "
                "AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)",
                ns,
            )
        ).fetchone()
    return Counts(
        active=int(row["active"]),
        archived=int(row["archived"]),
        chunks=int(row["chunks"]),
        oldest=row["oldest"],
        newest=row["newest"],
        by_content_type={r["k"]: int(r["n"]) for r in grouped["content_type"]},
        by_source={r["k"]: int(r["n"]) for r in grouped["source"]},
        entities=int(entities["n"]) if entities else 0,
        tags=int(tags["n"]) if tags else 0,
    )


async def days(
    pool: Pool,
    tz: ZoneInfo,
    namespace: str | None,
    after: datetime | None,
    before: datetime | None,
    limit: int,
    *,
    with_memories: bool,
) -> list[tuple[date, int, list[MemoryRecord]]]:
    """The latest days with memories (in ``tz``), their counts and, ``with_memories``, their
    twenty most important memories."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            """
            SELECT (m.created_at AT TIME ZONE %(tz)s)::date AS day, count(*) AS n
              FROM memories m
             WHERE m.is_active AND m.parent_id IS NULL
               AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
               AND (%(after)s::timestamptz IS NULL OR m.created_at >= %(after)s)
               AND (%(before)s::timestamptz IS NULL OR m.created_at < %(before)s)
             GROUP BY 1 ORDER BY 1 DESC LIMIT %(limit)s
            """,
            {"tz": tz.key, "ns": namespace, "after": after, "before": before, "limit": limit},
        )
        out = []
        for d in await cur.fetchall():
            rows: list[MemoryRecord] = []
            if with_memories:
                start = datetime.combine(d["day"], datetime.min.time(), tz)
                rows = await _records(
                    conn,
                    f"""{memories.SELECT_MEMORY}
                        WHERE m.is_active AND m.parent_id IS NULL
                          AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                          AND m.created_at >= %(start)s AND m.created_at < %(end)s
                        ORDER BY m.importance DESC, m.created_at DESC LIMIT 20""",
                    {"ns": namespace, "start": start, "end": start + timedelta(days=1)},
                )
            out.append((d["day"], int(d["n"]), rows))
    return out


async def decisions(
    pool: Pool, namespace: str | None, limit: int
) -> tuple[list[MemoryRecord], dict[str, list[str]]]:
    """The latest decisions, and for each the ids of the memories it superseded."""
    async with pool.connection() as conn:
        rows = await _records(
            conn,
            f"""{memories.SELECT_MEMORY}
                WHERE m.is_active AND m.parent_id IS NULL
                  AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                  AND (m.content_type = 'decision' OR EXISTS (
                       SELECT 1 FROM memory_tags t
                        WHERE t.memory_id = m.id AND t.tag = 'decision'))
                ORDER BY m.created_at DESC, m.id DESC LIMIT %(limit)s""",
            {"ns": namespace, "limit": limit},
        )
        # A supersession joins two memories: only those within the caller's scope are named.
        cond, scope_params = scope.sql_filter()
        older = await (
            await conn.execute(
                "SELECT m.id, m.superseded_by FROM memories m "
                f"WHERE m.superseded_by = ANY(%s) AND {cond}",
                ([r.id for r in rows], *scope_params),
            )
        ).fetchall()
    supersedes: dict[str, list[str]] = {}
    for r in older:
        supersedes.setdefault(r["superseded_by"], []).append(r["id"])
    return rows, supersedes


async def lineage(pool: Pool, memory_id: str, depth: int) -> list[MemoryRecord] | None:
    """The memory's supersede chain, oldest first, at most ``depth`` steps either way; None when
    the memory does not exist within the caller's scope."""
    async with pool.connection() as conn:
        start = await memories.get_record(conn, memory_id)
        if start is None:
            return None
        chain = [start]
        back = start
        cond, scope_params = scope.sql_filter()
        for _ in range(depth):
            found = await _records(
                conn,
                f"{memories.SELECT_MEMORY} WHERE m.superseded_by = %s AND {cond} "
                "ORDER BY m.created_at DESC LIMIT 1",
                (back.id, *scope_params),
            )
            if not found or any(c.id == found[0].id for c in chain):
                break
            chain.insert(0, found[0])
            back = found[0]
        forward = start
        for _ in range(depth):
            nxt_id = forward.superseded_by
            if not nxt_id or any(c.id == nxt_id for c in chain):
                break
            nxt = await memories.get_record(conn, nxt_id)
            if nxt is None:
                break
            chain.append(nxt)
            forward = nxt
    return chain


async def active_days(pool: Pool, tz: ZoneInfo, namespace: str | None) -> list[tuple[date, int]]:
    """Every day (in ``tz``) with memories, oldest first, and how many."""
    async with pool.connection() as conn:
        rows = await (
            await conn.execute(
                """
                SELECT (created_at AT TIME ZONE %(tz)s)::date AS day, count(*) AS n
                  FROM memories
                 WHERE is_active AND parent_id IS NULL
                   AND (%(ns)s::text IS NULL OR namespace = %(ns)s)
                 GROUP BY 1 ORDER BY 1
                """,
                {"tz": tz.key, "ns": namespace},
            )
        ).fetchall()
    return [(r["day"], int(r["n"])) for r in rows]


async def hierarchy(
    pool: Pool,
    namespace: str | None,
    after: datetime | None,
    before: datetime | None,
    max_episodes: int,
) -> Hierarchy:
    """Epochs and themes (tags ``epoch``, ``narrative``) in the time range, which of them are
    linked, and each theme's episodes: its namespace's memories of the 7 days before it."""
    bounds = {"ns": namespace, "after": after, "before": before}

    def tagged(tag: str) -> str:
        return (
            f"{memories.SELECT_MEMORY} WHERE {_HIERARCHY_WHERE} AND EXISTS (SELECT 1 FROM "
            f"memory_tags t WHERE t.memory_id = m.id AND t.tag = '{tag}') ORDER BY m.created_at"
        )

    async with pool.connection() as conn:
        epochs = await _records(conn, tagged("epoch"), bounds)
        themes = await _records(conn, tagged("narrative"), bounds)
        ids = [r.id for r in epochs + themes]
        ends, scope_params = scope.sql_filter("s", "t")
        linked_rows = await (
            await conn.execute(
                "SELECT l.source_id, l.target_id FROM memory_links l"
                " JOIN memories s ON s.id = l.source_id JOIN memories t ON t.id = l.target_id"
                " WHERE l.link_type = 'elaborates'"
                f" AND (l.source_id = ANY(%s) OR l.target_id = ANY(%s)) AND {ends}",
                (ids, ids, *scope_params),
            )
        ).fetchall()
        episodes = {}
        for theme in themes:
            episodes[theme.id] = await _records(
                conn,
                _EPISODES_SQL,
                {
                    "ns": theme.namespace,
                    "start": theme.created_at - timedelta(days=7),
                    "end": theme.created_at,
                    "n": max_episodes,
                },
            )
    linked = {r["source_id"] for r in linked_rows} | {r["target_id"] for r in linked_rows}
    return Hierarchy(epochs, themes, linked, episodes)
