"""SQL of the recalibration: the active, non-pinned importances of a namespace."""

from __future__ import annotations

from typing import Any

import psycopg

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def importances(conn: Conn, namespace: str) -> list[dict[str, Any]]:
    """``{id, version, importance}`` of each active root below pinned (1.0)."""
    cur = await conn.execute(
        "SELECT id, version, importance FROM memories WHERE namespace = %s "
        "AND is_active AND parent_id IS NULL AND round(importance::numeric, 2) < 1",
        (namespace,),
    )
    return await cur.fetchall()
