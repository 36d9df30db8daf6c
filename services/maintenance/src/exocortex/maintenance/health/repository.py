"""SQL of the health checks: the counts behind them, in one statement."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from exocortex.core.db.arrays import TextArray

Conn = psycopg.AsyncConnection[dict[str, Any]]

_COUNTS_SQL = """
WITH live AS (
    SELECT m.* FROM memories m
     WHERE m.is_active AND m.parent_id IS NULL
       AND (%(ns)s::text[] IS NULL OR m.namespace = ANY(%(ns)s))
)
SELECT
  (SELECT count(*) FROM live)::int AS total,
  (SELECT count(*) FROM live l WHERE l.embedding IS NULL
      AND NOT EXISTS (SELECT 1 FROM memories c WHERE c.parent_id = l.id))::int AS unembedded,
  (SELECT count(*) FROM live l
    WHERE NOT EXISTS (SELECT 1 FROM memory_tags t WHERE t.memory_id = l.id))::int AS untagged,
  (SELECT count(*) FROM entities e
    WHERE (%(ns)s::text[] IS NULL OR e.namespace = ANY(%(ns)s))
      AND NOT EXISTS (SELECT 1 FROM memory_entities me JOIN memories m ON m.id = me.memory_id
                       WHERE me.entity_id = e.id AND m.is_active))::int AS orphan_entities,
  (SELECT count(*) FROM live l WHERE l.created_at < now() - interval '30 days')::int AS old,
  (SELECT count(*) FROM live l LEFT JOIN memory_usage u ON u.memory_id = l.id
    WHERE l.created_at < now() - interval '30 days'
      AND coalesce(u.access_count, 0) = 0)::int AS old_never_accessed,
  (SELECT avg(importance) FROM live) AS mean_importance,
  (SELECT max(created_at) FROM live) AS newest,
  (SELECT max(u.last_accessed_at) FROM live l JOIN memory_usage u ON u.memory_id = l.id)
      AS last_access
"""

_BACKLOG_SQL = """
SELECT (report->>'clusters_found')::int AS clusters FROM job_runs
 WHERE job = 'consolidation' AND status = 'succeeded' AND dry_run
 ORDER BY id DESC LIMIT 1
"""


async def counts(conn: Conn, namespaces: Sequence[str] | None) -> tuple[dict[str, Any], int | None]:
    """The counts over the namespaces (None: all), and the clusters the last consolidation
    dry run found (None: none ran)."""
    ns = TextArray(namespaces) if namespaces is not None else None
    row = await (await conn.execute(_COUNTS_SQL, {"ns": ns})).fetchone()
    assert row is not None
    backlog = await (await conn.execute(_BACKLOG_SQL)).fetchone()
    return dict(row), (
        int(backlog["clusters"]) if backlog and backlog["clusters"] is not None else None
    )
