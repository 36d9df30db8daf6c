"""Every query of projection: the rows an event names (with their chunks and vectors), what the
indexes should hold (for the reconciler), how many memories that is (for the gauges), and the
lock that lets one replica of a deployment run the periodic reconciliation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray
from exocortex.core.db.pool import Pool, reading

Conn = AsyncConnection[Any]

# The memories the indexes should hold; answered from the partial index
# ix_memories_active_expires_at (migration 0007) instead of reading the whole table.
LIVE_MEMORIES_SQL = (
    "SELECT count(*) AS n FROM memories WHERE is_active "
    "AND (expires_at IS NULL OR expires_at > now())"
)

# ``enriched_last``: the memory's last write was its enrichment (``mark_enriched`` sets both
# times in one statement), which changes keywords only: its vector stays at the version before.
_EXPECTED_SQL = """
    SELECT id, version, embedding IS NOT NULL AS has_vector,
        (enriched_at IS NOT NULL AND enriched_at = updated_at) AS enriched_last
    FROM memories
    WHERE is_active AND (expires_at IS NULL OR expires_at > now()) AND id > %s
    ORDER BY id LIMIT %s
"""


@dataclass(frozen=True, slots=True)
class ProjectedRow:
    """What the indexes hold of a memory, and what decides whether they hold it: the columns
    an index document is made of, nothing else (no metadata, attribution or usage counts)."""

    id: str
    namespace: str
    content: str
    content_type: str
    source: str
    importance: float
    is_active: bool
    is_metadata: bool
    parent_id: str | None
    keywords: str
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    version: int
    embedding: bytes | None
    tags: list[str] = field(default_factory=list)

    def is_live(self, now: datetime) -> bool:
        """Active and not expired: what the indexes hold and searches may answer."""
        return self.is_active and (self.expires_at is None or self.expires_at > now)


_PROJECTED_COLUMNS = """
    m.id, m.namespace, m.content, m.content_type, m.source, m.importance, m.is_active,
    m.is_metadata, m.parent_id, m.keywords, m.expires_at, m.created_at, m.updated_at,
    m.version, m.embedding,
    coalesce(array(select t.tag from memory_tags t where t.memory_id = m.id order by t.tag),
             '{}'::text[]) AS tags
"""
_BY_ID_SQL = f"SELECT {_PROJECTED_COLUMNS} FROM memories m WHERE m.id = ANY(%s)"
# A memory and its children (chunks and variants follow their parent's state) in one
# statement: the planner answers it from the primary key and ix_memories_parent_id.
_WITH_CHILDREN_SQL = f"{_BY_ID_SQL} OR m.parent_id = ANY(%s)"


async def _projected(pool: Pool, sql: str, params: tuple[Any, ...]) -> dict[str, ProjectedRow]:
    # One statement, in autocommit: one round trip where a transaction took three (a store's
    # projection ahead reads its row this way).
    async with (
        reading(pool) as conn,
        conn.cursor(row_factory=class_row(ProjectedRow)) as cur,
    ):
        await cur.execute(sql, params)
        return {row.id: row for row in await cur.fetchall()}


async def with_vectors(pool: Pool, ids: Sequence[str]) -> dict[str, ProjectedRow]:
    """The rows (with their embedding) of ``ids`` that exist."""
    return await _projected(pool, _BY_ID_SQL, (TextArray(ids),))


async def with_chunks(pool: Pool, ids: Sequence[str]) -> dict[str, ProjectedRow]:
    """The rows of ``ids`` that exist and the children of any of them (chunks and variants of
    the touched memories follow their parent's state), with their embeddings."""
    array = TextArray(ids)
    return await _projected(pool, _WITH_CHILDREN_SQL, (array, array))


async def expected_page(
    pool: Pool, after: str, page_rows: int
) -> list[tuple[str, int, bool, bool]]:
    """(id, version, has a vector, last written by its enrichment) of the live memories after
    ``after``, in id order."""
    async with pool.connection() as conn:
        cur = await conn.execute(_EXPECTED_SQL, (after, page_rows))
        rows = await cur.fetchall()
    return [
        (r["id"], int(r["version"]), bool(r["has_vector"]), bool(r["enriched_last"])) for r in rows
    ]


async def enriched_last(pool: Pool, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` whose last write was their enrichment (see ``_EXPECTED_SQL``)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id FROM memories WHERE id = ANY(%s) "
            "AND enriched_at IS NOT NULL AND enriched_at = updated_at",
            (list(ids),),
        )
        return {r["id"] for r in await cur.fetchall()}


def vector_versions(version: int, enriched_last: bool) -> tuple[int, ...]:
    """The versions a memory's vector point may hold: its own, or, when its last write was
    its enrichment (keywords only, projected to the keyword index alone), the one before."""
    return (version, version - 1) if enriched_last and version > 1 else (version,)


async def live_memories(pool: Pool) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute(LIVE_MEMORIES_SQL)
        row = await cur.fetchone()
    return int(row["n"]) if row else 0


@asynccontextmanager
async def turn(pool: Pool, name: str) -> AsyncIterator[bool]:
    """Yields whether this process holds the advisory lock ``name`` (released on exit; with
    the connection, should the process die). Session-level, committed at once: the run under
    it keeps no transaction open."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS mine", (name,)
        )
        row = await cur.fetchone()
        await conn.commit()
        mine = bool(row and row["mine"])
        try:
            yield mine
        finally:
            if mine:
                await conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (name,))
