"""Rows of ``memory_links``: directed, typed links between memories, read in both directions."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

Row = dict[str, Any]

LINK_TYPES = ("related", "elaborates", "contradicts", "supersedes", "supports", "derived_from")


async def upsert(
    conn: AsyncConnection[Row], source_id: str, target_id: str, link_type: str, strength: float
) -> Row:
    """Create the link or overwrite its type and strength."""
    cur = await conn.execute(
        """
        INSERT INTO memory_links (source_id, target_id, link_type, strength)
        VALUES (%s, %s, %s, %s)
        ON CONFLICT (source_id, target_id)
        DO UPDATE SET link_type = EXCLUDED.link_type, strength = EXCLUDED.strength
        RETURNING source_id, target_id, link_type, strength, created_at
        """,
        (source_id, target_id, link_type, strength),
    )
    row = await cur.fetchone()
    assert row is not None
    return row


async def insert_missing(
    conn: AsyncConnection[Row], links: list[tuple[str, str, str, float]]
) -> int:
    """Add links that do not exist yet in either direction (automation never overwrites a link
    a person made). Returns how many were added."""
    added = 0
    for source_id, target_id, link_type, strength in links:
        cur = await conn.execute(
            """
            INSERT INTO memory_links (source_id, target_id, link_type, strength)
            SELECT %s, %s, %s, %s
            WHERE NOT EXISTS (SELECT 1 FROM memory_links
                              WHERE source_id = %s AND target_id = %s)
            ON CONFLICT DO NOTHING
            """,
            (source_id, target_id, link_type, strength, target_id, source_id),
        )
        added += cur.rowcount or 0
    return added


async def delete(conn: AsyncConnection[Row], a: str, b: str) -> int:
    """Remove the link between two memories, whichever way it points."""
    cur = await conn.execute(
        "DELETE FROM memory_links WHERE (source_id = %s AND target_id = %s) "
        "OR (source_id = %s AND target_id = %s)",
        (a, b, b, a),
    )
    return cur.rowcount or 0
