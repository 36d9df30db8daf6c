"""Active goals for reads that assemble several sections at once (the project snapshot).

Goals are written by the ingest service; this is the read side's own query of the same tables,
in the order `ListGoals` answers (priority, then newest), so both agree on which goals come first.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.repositories.goal_protos import goal_to_proto
from exocortex.proto.v1 import goals_pb2

Row = dict[str, Any]

_ACTIVE_SQL = """
SELECT id, namespace, title, description, status, priority, deadline, metadata, completed_at,
       created_at, updated_at
  FROM goals
 WHERE namespace = %s AND status = 'active'
 ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END,
          created_at DESC, id
 LIMIT %s
"""


async def active_goals(
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]], namespace: str, limit: int
) -> list[goals_pb2.Goal]:
    """Active goals with their milestones and progress counts (progress notes left out)."""
    async with pool.connection() as conn:
        goals = await (await conn.execute(_ACTIVE_SQL, (namespace, limit))).fetchall()
        if not goals:
            return []
        ids = [g["id"] for g in goals]
        cur = await conn.execute(
            "SELECT * FROM goal_milestones WHERE goal_id = ANY(%s) "
            "ORDER BY sort_order, created_at, id",
            (ids,),
        )
        milestones: dict[str, list[Row]] = {}
        for m in await cur.fetchall():
            milestones.setdefault(m["goal_id"], []).append(m)
        cur = await conn.execute(
            "SELECT goal_id, count(*) AS n FROM goal_links WHERE goal_id = ANY(%s) "
            "GROUP BY goal_id",
            (ids,),
        )
        counts = {r["goal_id"]: int(r["n"]) for r in await cur.fetchall()}
    return [goal_to_proto(g, milestones.get(g["id"], []), counts.get(g["id"], 0)) for g in goals]
