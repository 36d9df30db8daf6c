"""Contextual vectors' SQL (see ``core.domain.context``): the memory stored just before one in
its stretch of work, and the vector itself. Used by enrichment, which makes them, and by a
restore, which makes them again for the memories it brings back."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import tuple_row

from exocortex.core.ids import floor_id

Conn = AsyncConnection[Any]

# The root memory stored right before, in the same namespace and stretch of work (search's
# arrival-neighbour rule): one backward range scan of ix_memories_namespace_root_id, bounded
# below by the id of the gap's first millisecond.
_PREVIOUS_SQL = """
SELECT m.content
  FROM memories s
  JOIN memories m ON m.namespace = s.namespace
 WHERE s.id = %(id)s
   AND m.parent_id IS NULL AND m.is_active
   AND m.id < s.id AND m.id >= %(low)s
   AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
   AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
        OR m.conversation_id = s.conversation_id)
   AND (s.source IS NULL OR m.source IS NULL OR m.source = s.source)
 ORDER BY m.id DESC
 LIMIT 1
"""


async def previous_content(
    conn: Conn, memory_id: str, created_at: datetime, max_gap: timedelta
) -> str | None:
    """The content of the memory stored just before ``memory_id`` in its stretch of work."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_PREVIOUS_SQL, {"id": memory_id, "low": floor_id(created_at - max_gap)})
        row = await cur.fetchone()
    return str(row[0]) if row else None


async def save(conn: Conn, memory_id: str, vector: bytes | None) -> None:
    """The memory's contextual vector (None clears one its content no longer matches)."""
    await conn.execute(
        "UPDATE memories SET context_embedding = %s WHERE id = %s", (vector, memory_id)
    )


_SETTINGS_SQL = """
SELECT key, value FROM settings
 WHERE key IN ('enrichment.context_vectors', 'search.neighbour_max_gap_minutes')
"""


def _number(value: str | None, default: float) -> float:
    try:
        number = float(value) if value is not None else default
    except ValueError:
        return default
    return number if number == number and number >= 0 else default  # NaN, negative: default


async def settings(conn: Conn) -> tuple[bool, timedelta]:
    """Whether contextual vectors are made, and the previous memory's largest gap, as the
    settings table has them (for work outside the settings cache: a restore)."""
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute(_SETTINGS_SQL)
        values = {str(k): str(v) for k, v in await cur.fetchall()}
    made = values.get("enrichment.context_vectors", "false").strip().lower() == "true"
    gap = _number(values.get("search.neighbour_max_gap_minutes"), 30.0)
    return made, timedelta(minutes=min(gap, 525_600.0))
