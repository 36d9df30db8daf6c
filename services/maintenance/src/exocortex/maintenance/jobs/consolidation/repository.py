"""SQL of consolidation: the candidates of a namespace, and recording a consolidation (the
summary's lineage links, the consolidations row; archiving the sources is shared SQL)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core import scope
from exocortex.core.db.arrays import TextArray
from exocortex.core.ids import new_id

Conn = psycopg.AsyncConnection[dict[str, Any]]

# The source of summary memories: they are not clustered again.
SUMMARY_SOURCE = "consolidation"


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    # The row version the clustering read: a source is superseded only at that version.
    version: int
    content: str
    created_at: datetime
    tags: list[str]
    embedding: bytes


async def candidates(conn: Conn, namespace: str) -> list[Candidate]:
    """Active, embedded, non-metadata root memories of a namespace, newest first (seeds are
    taken in this order). Pinned memories (importance 1) and summaries stay out."""
    async with conn.cursor(row_factory=class_row(Candidate)) as cur:
        await cur.execute(
            """
            SELECT m.id, m.version, m.content, m.created_at, m.embedding,
                   coalesce(array_agg(t.tag ORDER BY t.tag)
                            FILTER (WHERE t.tag IS NOT NULL), '{}') AS tags
              FROM memories m LEFT JOIN memory_tags t ON t.memory_id = m.id
             WHERE m.namespace = %s AND m.is_active AND m.parent_id IS NULL
               AND m.embedding IS NOT NULL AND NOT m.is_metadata
               AND m.source <> %s AND round(m.importance::numeric, 2) < 1
               AND (m.expires_at IS NULL OR m.expires_at > now())
             GROUP BY m.id
             ORDER BY m.created_at DESC, m.id DESC
            """,
            (namespace, SUMMARY_SOURCE),
        )
        return await cur.fetchall()


async def record(
    conn: Conn,
    *,
    namespace: str,
    summary_id: str,
    source_ids: Sequence[str],
    strategy: str,
) -> str:
    consolidation_id = new_id()
    await conn.execute(
        """
        INSERT INTO consolidations (id, namespace, summary_id, source_ids, strategy,
                                    memories_merged)
        VALUES (%s, %s, %s, %s, %s, %s)
        """,
        (consolidation_id, namespace, summary_id, TextArray(source_ids), strategy, len(source_ids)),
    )
    async with conn.cursor() as cur:
        await cur.executemany(
            """
            INSERT INTO memory_links (source_id, target_id, link_type, strength)
            VALUES (%s, %s, 'derived_from', 1.0)
            ON CONFLICT (source_id, target_id) DO NOTHING
            """,
            [(summary_id, s) for s in source_ids if s != summary_id],
        )
    return consolidation_id


@dataclass(frozen=True, slots=True)
class ConsolidationRow:
    id: str
    namespace: str | None
    summary_id: str | None
    source_ids: list[str]
    strategy: str
    memories_merged: int
    created_at: datetime


async def history(
    conn: Conn, namespaces: Sequence[str] | None, limit: int
) -> list[ConsolidationRow]:
    """Consolidations of the namespaces (None: every one), newest first; one with its summary
    or any source outside the caller's scope is left out, as its members would show."""
    members, scope_params = scope.sql_filter_memories("c.source_ids || c.summary_id")
    scoped = TextArray(namespaces) if namespaces is not None else None
    async with conn.cursor(row_factory=class_row(ConsolidationRow)) as cur:
        await cur.execute(
            f"""
            SELECT c.id, c.namespace, c.summary_id, c.source_ids, c.strategy,
                   c.memories_merged, c.created_at
              FROM consolidations c
             WHERE (%s::text[] IS NULL OR c.namespace = ANY(%s)) AND {members}
             ORDER BY c.created_at DESC, c.id DESC LIMIT %s
            """,
            (scoped, scoped, *scope_params, limit),
        )
        return await cur.fetchall()
