"""Rows of ``memory_links``: directed, typed links between memories, read in both directions."""

from __future__ import annotations

from typing import Any

from psycopg import AsyncConnection

from exocortex.core import scope

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
    # One statement for all of them. Within one statement a link cannot see another the same
    # statement adds, so a pair given both ways, or twice, keeps its first only (as one
    # statement per link did).
    pairs: set[tuple[str, str]] = set()
    kept: list[tuple[str, str, str, float]] = []
    for link in links:
        source_id, target_id = link[0], link[1]
        if (source_id, target_id) in pairs or (target_id, source_id) in pairs:
            continue
        pairs.add((source_id, target_id))
        kept.append(link)
    if not kept:
        return 0
    cur = await conn.execute(
        """
        INSERT INTO memory_links (source_id, target_id, link_type, strength)
        SELECT l.s, l.t, l.kind, l.strength
        FROM unnest(%s::text[], %s::text[], %s::text[], %s::float8[])
             WITH ORDINALITY AS l(s, t, kind, strength, n)
        WHERE NOT EXISTS (SELECT 1 FROM memory_links m
                          WHERE m.source_id = l.t AND m.target_id = l.s)
        ORDER BY l.n
        ON CONFLICT DO NOTHING
        """,
        (
            [k[0] for k in kept],
            [k[1] for k in kept],
            [k[2] for k in kept],
            [float(k[3]) for k in kept],
        ),
    )
    return cur.rowcount or 0


async def delete(conn: AsyncConnection[Row], a: str, b: str) -> int:
    """Remove the link between two memories, whichever way it points, when both ends lie
    within the caller's scope (a link is changed only by a caller who may see both ends)."""
    cond, params = scope.sql_filter("s", "t")
    cur = await conn.execute(
        f"""
        DELETE FROM memory_links l USING memories s, memories t
         WHERE s.id = l.source_id AND t.id = l.target_id AND {cond}
           AND ((l.source_id = %s AND l.target_id = %s) OR (l.source_id = %s AND l.target_id = %s))
        """,
        (*params, a, b, b, a),
    )
    return cur.rowcount or 0
