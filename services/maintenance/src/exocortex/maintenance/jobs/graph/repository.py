"""SQL of the graph job."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def co_retrievals(
    conn: Conn, namespace: str, after_id: int, days: int
) -> tuple[list[list[str]], int]:
    """Result lists recorded since ``after_id`` (and within ``days``), and the newest id."""
    cur = await conn.execute(
        """
        SELECT id, memory_ids FROM co_retrievals
         WHERE namespace = %s AND id > %s AND created_at > now() - make_interval(days => %s)
         ORDER BY id
        """,
        (namespace, after_id, days),
    )
    rows = await cur.fetchall()
    return [list(r["memory_ids"]) for r in rows], max((r["id"] for r in rows), default=after_id)


async def upsert_related(
    conn: Conn, pairs: Sequence[tuple[str, str, int]], strengthen: float
) -> tuple[int, int]:
    """A ``related`` link for each (a, b, count) between active memories: created with strength
    min(0.9, 0.3 + count/20·0.6), or an existing one strengthened by ``strengthen`` (cap 0.9).
    Returns (created, strengthened)."""
    created = strengthened = 0
    for a, b, count in pairs:
        cur = await conn.execute(
            """
            UPDATE memory_links SET strength = least(0.9, strength + %s)
             WHERE (source_id = %s AND target_id = %s) OR (source_id = %s AND target_id = %s)
            """,
            (strengthen, a, b, b, a),
        )
        if cur.rowcount:
            strengthened += 1
            continue
        cur = await conn.execute(
            """
            INSERT INTO memory_links (source_id, target_id, link_type, strength)
            SELECT %s, %s, 'related', least(0.9, 0.3 + %s / 20.0 * 0.6)
             WHERE EXISTS (SELECT 1 FROM memories WHERE id = %s AND is_active)
               AND EXISTS (SELECT 1 FROM memories WHERE id = %s AND is_active)
            ON CONFLICT DO NOTHING
            """,
            (a, b, count, a, b),
        )
        created += cur.rowcount
    return created, strengthened


async def prune_co_retrievals(conn: Conn, namespace: str, keep_days: int) -> int:
    cur = await conn.execute(
        "DELETE FROM co_retrievals WHERE namespace = %s "
        "AND created_at < now() - make_interval(days => %s)",
        (namespace, keep_days),
    )
    return cur.rowcount


async def densify(conn: Conn, namespace: str, min_shared: int, limit: int, dry_run: bool) -> int:
    """``co_occurs`` between entity pairs mentioned together by at least ``min_shared`` active
    memories and not related yet (confidence min(0.9, 0.3 + shared/10·0.6))."""
    pairs = """
        SELECT a.entity_id AS s, b.entity_id AS t, count(*) AS shared
          FROM memory_entities a
          JOIN memory_entities b ON b.memory_id = a.memory_id AND a.entity_id < b.entity_id
          JOIN memories m ON m.id = a.memory_id AND m.is_active AND m.namespace = %(ns)s
         GROUP BY 1, 2 HAVING count(*) >= %(min)s
    """
    select = f"""
        SELECT p.s, p.t, p.shared FROM ({pairs}) p
         WHERE NOT EXISTS (SELECT 1 FROM entity_relationships r
                           WHERE (r.source_entity_id = p.s AND r.target_entity_id = p.t)
                              OR (r.source_entity_id = p.t AND r.target_entity_id = p.s))
         ORDER BY p.shared DESC, p.s, p.t LIMIT %(limit)s
    """
    params = {"ns": namespace, "min": min_shared, "limit": limit}
    if dry_run:
        cur = await conn.execute(f"SELECT count(*) AS n FROM ({select}) q", params)
        row = await cur.fetchone()
        return int(row["n"]) if row else 0
    cur = await conn.execute(
        f"""
        INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, relationship,
                                          confidence, context)
        SELECT 'co_' || md5(q.s || q.t), q.s, q.t, 'co_occurs',
               least(0.9, 0.3 + q.shared / 10.0 * 0.6), 'mentioned together'
          FROM ({select}) q
        ON CONFLICT DO NOTHING
        """,
        params,
    )
    return cur.rowcount


async def prune_orphans(conn: Conn, namespace: str, dry_run: bool) -> list[str]:
    """Extracted entities every mention of which is now an archived memory. Entities someone
    curated (aliases, metadata or tags) and entities with no mention at all (made by hand)
    are kept, as are entities in a relationship with another."""
    cur = await conn.execute(
        f"""
        {"SELECT e.id FROM entities e" if dry_run else "DELETE FROM entities e"}
         WHERE e.namespace = %s
           AND e.aliases = '[]'::jsonb AND e.metadata = '{{}}'::jsonb
           AND NOT EXISTS (SELECT 1 FROM entity_tags t WHERE t.entity_id = e.id)
           AND EXISTS (SELECT 1 FROM memory_entities me WHERE me.entity_id = e.id)
           AND NOT EXISTS (SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id
                            WHERE me.entity_id = e.id AND m.is_active)
           AND NOT EXISTS (SELECT 1 FROM entity_relationships r
                            WHERE r.source_entity_id = e.id OR r.target_entity_id = e.id)
        {"" if dry_run else "RETURNING e.id"}
        """,
        (namespace,),
    )
    return [r["id"] for r in await cur.fetchall()]


async def last_watermark(conn: Conn, namespace: str) -> int:
    """The co-retrieval id the last real graph run got to in this namespace."""
    cur = await conn.execute(
        """
        SELECT (report->'watermarks'->>%s)::bigint AS w FROM job_runs
         WHERE job = 'graph' AND status = 'succeeded' AND NOT dry_run
           AND report->'watermarks' ? %s
         ORDER BY id DESC LIMIT 1
        """,
        (namespace, namespace),
    )
    row = await cur.fetchone()
    return int(row["w"]) if row and row["w"] is not None else 0
