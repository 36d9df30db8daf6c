"""SQL of the entity backfill: which memories to hand back to enrichment, and handing them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray
from exocortex.maintenance import events
from exocortex.maintenance.events import Changed
from exocortex.maintenance.jobs import repository as jobs_repository

Conn = psycopg.AsyncConnection[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class Candidate:
    id: str
    # The version read: the memory is handed back only while it is still at it.
    version: int
    namespace: str
    content: str


async def stuck(conn: Conn, namespace: str, older_than_minutes: int, limit: int) -> list[Candidate]:
    """Active memories still waiting for enrichment long after their last change: their event
    was lost or parked, so nothing will enrich them by itself."""
    async with conn.cursor(row_factory=class_row(Candidate)) as cur:
        await cur.execute(
            """
            SELECT id, version, namespace, '' AS content FROM memories
             WHERE namespace = %s AND is_active AND parent_id IS NULL
               AND enrichment_status = 'pending'
               AND updated_at < now() - make_interval(mins => %s)
             ORDER BY id LIMIT %s
            """,
            (namespace, older_than_minutes, limit),
        )
        return await cur.fetchall()


async def unlinked_page(conn: Conn, namespace: str, after: str, size: int) -> list[Candidate]:
    """A page (by id, after ``after``) of enriched active memories that mention no entity."""
    async with conn.cursor(row_factory=class_row(Candidate)) as cur:
        await cur.execute(
            """
            SELECT m.id, m.version, m.namespace, m.content FROM memories m
             WHERE m.namespace = %s AND m.is_active AND m.parent_id IS NULL
               AND m.enrichment_status = 'done' AND m.id > %s
               AND NOT EXISTS (SELECT 1 FROM memory_entities me WHERE me.memory_id = m.id)
             ORDER BY m.id LIMIT %s
            """,
            (namespace, after, size),
        )
        return await cur.fetchall()


async def requeue(conn: Conn, picked: Sequence[Candidate], reason: str, run_id: int | None) -> int:
    """Marks each memory (still at the version read) as waiting for enrichment and emits the
    `memory.updated` event enrichment acts on; the version is kept (nothing the user wrote
    changed). Returns how many were handed back."""
    if not picked:
        return 0
    versions = {c.id: c.version for c in picked}
    ids = list(versions)
    cur = await conn.execute(
        """
        UPDATE memories m SET enrichment_status = 'pending'
          FROM unnest(%s::text[], %s::bigint[]) AS w(id, version)
         WHERE m.id = w.id AND m.version = w.version AND m.is_active
        RETURNING m.id, m.version, m.namespace
        """,
        (TextArray(ids), [versions[i] for i in ids]),
    )
    rows = await cur.fetchall()
    changed = [Changed(r["id"], int(r["version"]), r["namespace"]) for r in rows]
    await events.emit(conn, changed, "updated")
    await jobs_repository.audit(
        conn,
        [(c.memory_id, c.namespace, "entity-backfill", {"reason": reason}) for c in changed],
        run_id,
    )
    return len(changed)
