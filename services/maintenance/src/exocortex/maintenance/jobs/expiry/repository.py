"""SQL of the sentinel-report expiry: the reports due, and their expiry set (with the event and
an audit row, in the caller's transaction)."""

from __future__ import annotations

from typing import Any

import psycopg

from exocortex.core.db.arrays import TextArray
from exocortex.maintenance import events
from exocortex.maintenance.events import Changed
from exocortex.maintenance.jobs import repository as jobs_repository

Conn = psycopg.AsyncConnection[dict[str, Any]]

REPORT_TAGS = ("cortex", "health-check", "sentinel", "metrics")
REPORT_SOURCE = "mcp"
MAX_IMPORTANCE = 0.6
GRACE_DAYS = 7

_REPORTS = """
    SELECT m.id, m.version, m.namespace FROM memories m
     WHERE m.namespace = %(namespace)s AND m.is_active AND m.parent_id IS NULL
       AND m.source = %(source)s AND m.importance <= %(max_importance)s
       AND m.expires_at IS NULL
       AND m.created_at < now() - make_interval(days => %(ttl)s)
       AND EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = m.id AND t.tag = ANY(%(tags)s))
"""


async def expire(conn: Conn, namespace: str, ttl: int, run_id: int) -> list[Changed]:
    cur = await conn.execute(
        f"""
        WITH due AS ({_REPORTS})
        UPDATE memories m
           SET expires_at = now() + make_interval(days => %(grace)s), updated_at = now(),
               version = m.version + 1
          FROM due WHERE m.id = due.id
        RETURNING m.id, m.version, m.namespace
        """,
        args(namespace, ttl) | {"grace": GRACE_DAYS},
    )
    changed = [Changed(r["id"], int(r["version"]), r["namespace"]) for r in await cur.fetchall()]
    if not changed:
        return []
    # Chunks carry their parent's expiry.
    await conn.execute(
        "UPDATE memories c SET expires_at = p.expires_at, updated_at = now(), "
        "version = c.version + 1 FROM memories p WHERE c.parent_id = p.id AND p.id = ANY(%s)",
        (TextArray([c.memory_id for c in changed]),),
    )
    await events.emit(conn, changed, "updated")
    await jobs_repository.audit(
        conn,
        [(c.memory_id, c.namespace, "report-expiry-set", {"days": GRACE_DAYS}) for c in changed],
        run_id,
    )
    return changed


def args(namespace: str, ttl: int) -> dict[str, Any]:
    return {
        "namespace": namespace,
        "source": REPORT_SOURCE,
        "max_importance": MAX_IMPORTANCE,
        "ttl": ttl,
        "tags": list(REPORT_TAGS),
    }


async def due(conn: Conn, namespace: str, ttl: int) -> list[str]:
    cur = await conn.execute(_REPORTS, args(namespace, ttl))
    return [r["id"] for r in await cur.fetchall()]
