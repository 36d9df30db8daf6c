"""SQL the jobs share for changing memories: archiving (with supersession lineage) and
importance changes. Each bumps the row's version (and its chunks', which follow their parent in
the indexes), enqueues the event that moves the projections, and writes an audit row, all in the
caller's transaction. Nothing here deletes a memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg

from exocortex.core.db.arrays import TextArray
from exocortex.maintenance import events
from exocortex.maintenance.events import Changed
from exocortex.maintenance.jobs import repository

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def archive(
    conn: Conn,
    ids: Sequence[str],
    *,
    action: str,
    run_id: int | None,
    superseded_by: str | None = None,
    consolidated_into: str | None = None,
    details: Mapping[str, Mapping[str, Any]] | None = None,
    versions: Mapping[str, int] | None = None,
) -> list[Changed]:
    """Archive the still-active roots among ``ids`` (a memory changed meanwhile by someone
    else is left alone when it is no longer active). A job that chose ``ids`` from an earlier
    read passes the ``versions`` it read: a memory changed since (its importance raised by a
    user, say) no longer matches what was decided and is skipped. Returns what was archived."""
    if not ids:
        return []
    cur = await conn.execute(
        """
        WITH wanted(id, version) AS (SELECT * FROM unnest(%s::text[], %s::bigint[]))
        UPDATE memories m
           SET is_active = false, archived_by = 'automation',
               superseded_by = coalesce(%s, m.superseded_by),
               consolidated_into = coalesce(%s, m.consolidated_into),
               updated_at = now(), version = m.version + 1
          FROM wanted w
         WHERE m.id = w.id AND (w.version IS NULL OR m.version = w.version)
           AND m.is_active AND m.parent_id IS NULL
        RETURNING m.id, m.version, m.namespace
        """,
        (
            TextArray(ids),
            [None if versions is None else versions[i] for i in ids],
            superseded_by,
            consolidated_into,
        ),
    )
    changed = [Changed(r["id"], int(r["version"]), r["namespace"]) for r in await cur.fetchall()]
    if not changed:
        return []
    done = TextArray([c.memory_id for c in changed])
    await conn.execute(
        "UPDATE memories SET is_active = false, archived_by = 'automation', updated_at = now(), "
        "version = version + 1 WHERE parent_id = ANY(%s)",
        (done,),
    )
    await events.emit(conn, changed, "archived")
    base = {"superseded_by": superseded_by} if superseded_by else {}
    await repository.audit(
        conn,
        [
            (c.memory_id, c.namespace, action, {**base, **((details or {}).get(c.memory_id) or {})})
            for c in changed
        ],
        run_id,
    )
    return changed


async def set_importance(
    conn: Conn,
    changes: Mapping[str, float],
    *,
    versions: Mapping[str, int],
    action: str,
    run_id: int | None,
) -> list[Changed]:
    """New importances for active memories (chunks copy their parent's), each written only
    while the memory is still at the version it was read at: the new value was computed from
    that read, so a row changed since (a user's PATCH of its importance, say) is skipped, not
    overwritten. Returns what was written."""
    if not changes:
        return []
    ids = list(changes)
    cur = await conn.execute(
        """
        WITH wanted(id, importance, version) AS (
            SELECT * FROM unnest(%s::text[], %s::double precision[], %s::bigint[])
        ), old AS (
            SELECT m.id, m.importance FROM memories m JOIN wanted w USING (id)
        )
        UPDATE memories m SET importance = w.importance, updated_at = now(),
               version = m.version + 1
          FROM wanted w, old o
         WHERE m.id = w.id AND o.id = w.id AND m.version = w.version
           AND m.is_active AND m.importance <> w.importance
        RETURNING m.id, m.version, m.namespace, o.importance AS old_importance, m.importance
        """,
        (TextArray(ids), [changes[i] for i in ids], [versions[i] for i in ids]),
    )
    rows = await cur.fetchall()
    changed = [Changed(r["id"], int(r["version"]), r["namespace"]) for r in rows]
    if not changed:
        return []
    await conn.execute(
        """
        UPDATE memories c SET importance = p.importance, updated_at = now(),
               version = c.version + 1
          FROM memories p
         WHERE c.parent_id = p.id AND p.id = ANY(%s)
        """,
        (TextArray([c.memory_id for c in changed]),),
    )
    await events.emit(conn, changed, "updated")
    await repository.audit(
        conn,
        [
            (r["id"], r["namespace"], action, {"old": r["old_importance"], "new": r["importance"]})
            for r in rows
        ],
        run_id,
    )
    return changed
