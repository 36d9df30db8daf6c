"""Every query of projection: the rows an event names (with their chunks and vectors), what the
indexes should hold (for the reconciler), how many memories that is (for the gauges), and the
lock that lets one replica of a deployment run the periodic reconciliation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import class_row

from exocortex.core.db.pool import Pool
from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import memories

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


async def with_vectors(pool: Pool, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    """The rows (with their embedding) of ``ids`` that exist."""
    async with pool.connection() as conn:
        return await memories.get_records(conn, ids, with_embedding=True)


async def with_chunks(pool: Pool, ids: Sequence[str]) -> dict[str, MemoryRecord]:
    """The rows of ``ids`` that exist and the chunks of any of them (chunks of the touched
    memories follow their parent's state), with their embeddings."""
    async with pool.connection() as conn:
        rows = await memories.get_records(conn, ids, with_embedding=True)
        async with conn.cursor(row_factory=class_row(MemoryRecord)) as cur:
            await cur.execute(
                f"{memories.SELECT_MEMORY_WITH_EMBEDDING} WHERE m.parent_id = ANY(%s)",
                (list(ids),),
            )
            for row in await cur.fetchall():
                rows.setdefault(row.id, row)
    return rows


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
