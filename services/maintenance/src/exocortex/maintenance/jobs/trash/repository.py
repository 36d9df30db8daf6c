"""SQL of the trash: archived roots with who archived them (`archived_by`, kept by a trigger),
and the hard delete of those due. Chunks and variants go with their root (foreign keys)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray
from exocortex.maintenance import events
from exocortex.maintenance.events import Changed
from exocortex.maintenance.jobs import repository

Conn = psycopg.AsyncConnection[dict[str, Any]]

PREVIEW_CHARS = 200

_TRASHED = f"""
    SELECT m.id, m.version, m.namespace, left(m.content, {PREVIEW_CHARS}) AS content,
           coalesce(m.archived_by, 'automation') AS archived_by, m.updated_at AS archived_at,
           m.superseded_by,
           EXISTS (SELECT 1 FROM memories s WHERE s.id = m.superseded_by AND s.is_active)
               AS successor_active
      FROM memories m
     WHERE m.namespace = %(namespace)s AND NOT m.is_active AND m.parent_id IS NULL
"""

# Due: older than the clock, put there by a person (unless the caller empties everything), and
# not superseded by a memory still active (it is that memory's history).
_DUE = """
       AND m.updated_at < now() - make_interval(days => %(days)s)
       AND (%(everything)s OR m.archived_by = 'person')
       AND NOT EXISTS (SELECT 1 FROM memories s WHERE s.id = m.superseded_by AND s.is_active)
"""


@dataclass(frozen=True, slots=True)
class Trashed:
    id: str
    version: int
    namespace: str
    content: str
    archived_by: str  # person | automation
    archived_at: datetime
    superseded_by: str | None
    successor_active: bool


async def listed(conn: Conn, namespace: str, limit: int) -> list[Trashed]:
    """The namespace's trash, most recently archived first."""
    async with conn.cursor(row_factory=class_row(Trashed)) as cur:
        await cur.execute(
            _TRASHED + " ORDER BY m.updated_at DESC, m.id LIMIT %(limit)s",
            {"namespace": namespace, "limit": limit},
        )
        return await cur.fetchall()


async def counts(conn: Conn, namespace: str) -> dict[str, int]:
    """Trashed roots of the namespace by who archived them."""
    cur = await conn.execute(
        """
        SELECT coalesce(archived_by, 'automation') AS origin, count(*) AS n FROM memories
         WHERE namespace = %s AND NOT is_active AND parent_id IS NULL GROUP BY 1
        """,
        (namespace,),
    )
    found = {str(r["origin"]): int(r["n"]) for r in await cur.fetchall()}
    return {"person": found.get("person", 0), "automation": found.get("automation", 0)}


async def due(
    conn: Conn, namespace: str, *, days: int, everything: bool, limit: int
) -> list[Trashed]:
    """Rows the purge deletes, oldest first."""
    async with conn.cursor(row_factory=class_row(Trashed)) as cur:
        await cur.execute(
            _TRASHED + _DUE + " ORDER BY m.updated_at, m.id LIMIT %(limit)s",
            {"namespace": namespace, "days": days, "everything": everything, "limit": limit},
        )
        return await cur.fetchall()


async def purge(
    conn: Conn, rows: Sequence[Trashed], *, days: int, everything: bool, run_id: int
) -> list[Changed]:
    """Hard-deletes ``rows`` still as they were read (same version, still due), with the event
    that drops them (and their chunks) from the indexes and an audit row each, in the caller's
    transaction. Returns what was deleted."""
    if not rows:
        return []
    ids = TextArray([r.id for r in rows])
    cur = await conn.execute(
        "SELECT parent_id, array_agg(id) AS ids FROM memories WHERE parent_id = ANY(%s) "
        "GROUP BY parent_id",
        (ids,),
    )
    chunks = {str(r["parent_id"]): list(r["ids"]) for r in await cur.fetchall()}
    cur = await conn.execute(
        """
        WITH wanted(id, version) AS (SELECT * FROM unnest(%(ids)s::text[], %(versions)s::bigint[]))
        DELETE FROM memories m USING wanted w
         WHERE m.id = w.id AND m.version = w.version AND NOT m.is_active AND m.parent_id IS NULL
        """
        + _DUE
        + " RETURNING m.id, m.version, m.namespace, m.archived_by",
        {
            "ids": ids,
            "versions": [r.version for r in rows],
            "days": days,
            "everything": everything,
        },
    )
    deleted = await cur.fetchall()
    gone = [Changed(r["id"], int(r["version"]) + 1, r["namespace"]) for r in deleted]
    await events.emit(conn, gone, "deleted", chunks)
    await repository.audit(
        conn,
        [(r["id"], r["namespace"], "purged", {"archived_by": r["archived_by"]}) for r in deleted],
        run_id,
    )
    return gone
