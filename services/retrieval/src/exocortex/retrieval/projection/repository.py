"""Every query of projection: the rows an event names (with their chunks and vectors), what the
indexes should hold (for the reconciler) and how many memories that is (for the gauges)."""

from __future__ import annotations

from collections.abc import Sequence
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

_EXPECTED_SQL = """
    SELECT id, version, embedding IS NOT NULL AS has_vector FROM memories
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


async def expected_page(pool: Pool, after: str, page_rows: int) -> list[tuple[str, int, bool]]:
    """(id, version, has a vector) of the live memories after ``after``, in id order."""
    async with pool.connection() as conn:
        cur = await conn.execute(_EXPECTED_SQL, (after, page_rows))
        rows = await cur.fetchall()
    return [(r["id"], int(r["version"]), bool(r["has_vector"])) for r in rows]


async def live_memories(pool: Pool) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute(LIVE_MEMORIES_SQL)
        row = await cur.fetchone()
    return int(row["n"]) if row else 0
