"""SQL of the importance job: each active root's signals and what was already applied to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Signals:
    id: str
    # The row version these signals were read at: a change is written only at that version.
    version: int
    importance: float
    access_count: int
    useful_count: int
    created_at: datetime
    boosted_at_access: int | None
    decayed_at: datetime | None
    graph_boosted: bool
    # Linked to one of the namespace's most connected entities.
    central: bool


async def signals(conn: Conn, namespace: str, central_share: float) -> list[Signals]:
    """Every active root of the namespace with its use, marks and whether it mentions one of
    the top ``central_share`` of entities by degree (relationships and mentions; entities of
    degree 0 are never central, so a graph without edges boosts nothing)."""
    async with conn.cursor(row_factory=class_row(Signals)) as cur:
        await cur.execute(
            """
            WITH degree AS (
                SELECT e.id,
                       (SELECT count(*) FROM entity_relationships r
                         WHERE r.source_entity_id = e.id OR r.target_entity_id = e.id)
                     + (SELECT count(*) FROM memory_entities me WHERE me.entity_id = e.id) AS d
                  FROM entities e WHERE e.namespace = %(ns)s
            ), ranked AS (
                SELECT id, d, percent_rank() OVER (ORDER BY d DESC) AS pr FROM degree
            ), central AS (
                SELECT id FROM ranked
                 WHERE d > 1 AND (pr < %(share)s
                       OR id = (SELECT id FROM ranked ORDER BY d DESC, id LIMIT 1))
            )
            SELECT m.id, m.version, m.importance, coalesce(u.access_count, 0) AS access_count,
                   m.useful_count, m.created_at, k.boosted_at_access, k.decayed_at,
                   coalesce(k.graph_boosted, false) AS graph_boosted,
                   EXISTS (SELECT 1 FROM memory_entities me JOIN central c ON c.id = me.entity_id
                            WHERE me.memory_id = m.id) AS central
              FROM memories m
              LEFT JOIN memory_usage u ON u.memory_id = m.id
              LEFT JOIN importance_marks k ON k.memory_id = m.id
             WHERE m.namespace = %(ns)s AND m.is_active AND m.parent_id IS NULL
            """,
            {"ns": namespace, "share": central_share},
        )
        return await cur.fetchall()


async def mark(
    conn: Conn,
    *,
    boosted: Sequence[tuple[str, int]] = (),
    decayed: Sequence[str] = (),
    graph: Sequence[str] = (),
) -> None:
    """Remember what was applied, so the next run does not apply it again."""
    if boosted:
        await conn.execute(
            """
            INSERT INTO importance_marks (memory_id, boosted_at_access)
            SELECT * FROM unnest(%s::text[], %s::int[])
            ON CONFLICT (memory_id) DO UPDATE SET boosted_at_access = EXCLUDED.boosted_at_access
            """,
            (TextArray([b[0] for b in boosted]), [b[1] for b in boosted]),
        )
    if decayed:
        await conn.execute(
            """
            INSERT INTO importance_marks (memory_id, decayed_at)
            SELECT unnest(%s::text[]), now()
            ON CONFLICT (memory_id) DO UPDATE SET decayed_at = now()
            """,
            (TextArray(decayed),),
        )
    if graph:
        await conn.execute(
            """
            INSERT INTO importance_marks (memory_id, graph_boosted)
            SELECT unnest(%s::text[]), true
            ON CONFLICT (memory_id) DO UPDATE SET graph_boosted = true
            """,
            (TextArray(graph),),
        )
