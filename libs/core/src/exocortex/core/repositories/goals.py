"""Rows of ``goals``, ``goal_milestones`` and ``goal_links``: every query of those tables, for the
write side (ingest) and the read side (retrieval) alike, so both order goals the same way
(priority, then newest) and see the same columns.

A goal or milestone reached by id is filtered by the caller's namespace scope: one outside it
reads as missing.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection

from exocortex.core import scope

Row = dict[str, Any]
Conn = AsyncConnection[Row]

GOAL_COLUMNS = (
    "id, namespace, title, description, status, priority, deadline, metadata, completed_at, "
    "created_at, updated_at"
)
_PRIORITY_ORDER = (
    "CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END"
)
# Completing stamps completed_at once; any other status clears it.
_STATUS_SET = (
    "completed_at = CASE WHEN %s = 'completed' THEN coalesce(completed_at, now()) END, status = %s"
)


async def list_goals(conn: Conn, namespace: str, status: str, limit: int) -> list[Row]:
    """Goals of a namespace with ``status`` (``all`` for every status), most urgent first."""
    cur = await conn.execute(
        f"SELECT {GOAL_COLUMNS} FROM goals WHERE namespace = %s "
        "AND (%s = 'all' OR status = %s) "
        f"ORDER BY {_PRIORITY_ORDER}, created_at DESC, id LIMIT %s",
        (namespace, status, status, limit),
    )
    return await cur.fetchall()


async def milestones_by_goal(conn: Conn, goal_ids: list[str]) -> dict[str, list[Row]]:
    """Each goal's milestones in their order."""
    cur = await conn.execute(
        "SELECT * FROM goal_milestones WHERE goal_id = ANY(%s) ORDER BY sort_order, created_at, id",
        (goal_ids,),
    )
    by_goal: dict[str, list[Row]] = {}
    for m in await cur.fetchall():
        by_goal.setdefault(m["goal_id"], []).append(m)
    return by_goal


async def progress_counts(conn: Conn, goal_ids: list[str]) -> dict[str, int]:
    """How many memories within the caller's scope are linked to each goal (goals without any
    are absent)."""
    cond, params = scope.sql_filter()
    cur = await conn.execute(
        "SELECT l.goal_id, count(*) AS n FROM goal_links l JOIN memories m ON m.id = l.memory_id"
        f" WHERE l.goal_id = ANY(%s) AND {cond} GROUP BY l.goal_id",
        (goal_ids, *params),
    )
    return {r["goal_id"]: int(r["n"]) for r in await cur.fetchall()}


async def get_goal(conn: Conn, goal_id: str, *, lock: bool = False) -> Row | None:
    """The goal, when it exists within the caller's scope (locked for update with ``lock``)."""
    suffix = " FOR UPDATE" if lock else ""
    cond, params = scope.sql_filter("goals")
    cur = await conn.execute(
        f"SELECT {GOAL_COLUMNS} FROM goals WHERE id = %s AND {cond}{suffix}", (goal_id, *params)
    )
    return await cur.fetchone()


async def progress_memory_ids(conn: Conn, goal_id: str, limit: int) -> list[str]:
    """The memories linked to the goal, newest first."""
    cond, params = scope.sql_filter()
    cur = await conn.execute(
        "SELECT l.memory_id FROM goal_links l JOIN memories m ON m.id = l.memory_id "
        f"WHERE l.goal_id = %s AND {cond} ORDER BY m.created_at DESC, m.id DESC LIMIT %s",
        (goal_id, *params, limit),
    )
    return [r["memory_id"] for r in await cur.fetchall()]


async def insert_goal(
    conn: Conn,
    goal_id: str,
    *,
    namespace: str,
    title: str,
    description: str | None,
    status: str,
    priority: str,
    deadline: datetime | None,
    metadata: dict[str, Any],
) -> None:
    await conn.execute(
        "INSERT INTO goals (id, namespace, title, description, status, priority, "
        "deadline, metadata, completed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
        "CASE WHEN %s = 'completed' THEN now() END)",
        (
            goal_id,
            namespace,
            title,
            description,
            status,
            priority,
            deadline,
            json.dumps(metadata),
            status,
        ),
    )


async def update_goal(
    conn: Conn,
    goal_id: str,
    *,
    title: str | None = None,
    description: str | None = None,
    priority: str | None = None,
    deadline: datetime | None = None,
    clear: tuple[str, ...] = (),
    status: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> None:
    """Set what is given (None: unchanged), null the ``clear`` columns (names the caller has
    checked), and move ``updated_at``. A new title or description drops the goal's embedding,
    which is of "title: description" and recomputed when next needed."""
    sets: list[str] = []
    params: list[Any] = []
    for column, value in (("title", title), ("description", description)):
        if value is not None:
            sets.append(f"{column} = %s")
            params.append(value)
    if priority is not None:
        sets.append("priority = %s")
        params.append(priority)
    if deadline is not None:
        sets.append("deadline = %s")
        params.append(deadline)
    sets.extend(f"{name} = NULL" for name in clear)
    if title is not None or description is not None or clear:
        sets.append("embedding = NULL, embedding_model = NULL")
    if status is not None:
        sets.append(_STATUS_SET)
        params.extend([status, status])
    if metadata is not None:
        sets.append("metadata = %s")
        params.append(json.dumps(metadata))
    sets.append("updated_at = now()")
    await conn.execute(f"UPDATE goals SET {', '.join(sets)} WHERE id = %s", (*params, goal_id))


async def delete_goal(conn: Conn, goal_id: str) -> bool:
    """Delete the goal (within the caller's scope); False when there was none."""
    cond, scoped = scope.sql_filter("goals")
    cur = await conn.execute(f"DELETE FROM goals WHERE id = %s AND {cond}", (goal_id, *scoped))
    return cur.rowcount > 0


async def touch_goal(conn: Conn, goal_id: str) -> None:
    await conn.execute("UPDATE goals SET updated_at = now() WHERE id = %s", (goal_id,))


async def link_progress(conn: Conn, goal_id: str, memory_id: str) -> None:
    """An explicit link at full relevance (it overrides a link enrichment inferred)."""
    await conn.execute(
        "INSERT INTO goal_links (goal_id, memory_id, relevance, kind) "
        "VALUES (%s, %s, 1.0, 'explicit') ON CONFLICT (goal_id, memory_id) "
        "DO UPDATE SET kind = 'explicit', relevance = 1.0",
        (goal_id, memory_id),
    )


async def next_milestone_order(conn: Conn, goal_id: str) -> int:
    """After the last milestone; the first is 1."""
    cur = await conn.execute(
        "SELECT coalesce(max(sort_order), 0) + 1 AS n FROM goal_milestones WHERE goal_id = %s",
        (goal_id,),
    )
    row = await cur.fetchone()
    return int(row["n"]) if row else 1


async def insert_milestone(
    conn: Conn,
    milestone_id: str,
    goal_id: str,
    *,
    title: str,
    status: str,
    order: int,
    deadline: datetime | None,
) -> None:
    await conn.execute(
        "INSERT INTO goal_milestones (id, goal_id, title, status, sort_order, deadline, "
        "completed_at) VALUES (%s, %s, %s, %s, %s, %s, "
        "CASE WHEN %s = 'completed' THEN now() END)",
        (milestone_id, goal_id, title, status, order, deadline, status),
    )


async def update_milestone(
    conn: Conn,
    goal_id: str,
    milestone_id: str,
    *,
    title: str | None = None,
    order: int | None = None,
    deadline: datetime | None = None,
    clear: tuple[str, ...] = (),
    status: str | None = None,
) -> bool:
    """Set what is given; False when the goal has no such milestone."""
    sets: list[str] = []
    params: list[Any] = []
    for column, value in (("title", title), ("sort_order", order), ("deadline", deadline)):
        if value is not None:
            sets.append(f"{column} = %s")
            params.append(value)
    sets.extend(f"{name} = NULL" for name in clear)
    if status is not None:
        sets.append(_STATUS_SET)
        params.extend([status, status])
    sets.append("updated_at = now()")
    cur = await conn.execute(
        f"UPDATE goal_milestones SET {', '.join(sets)} WHERE id = %s AND goal_id = %s",
        (*params, milestone_id, goal_id),
    )
    return cur.rowcount > 0


async def delete_milestone(conn: Conn, goal_id: str, milestone_id: str) -> bool:
    cur = await conn.execute(
        "DELETE FROM goal_milestones WHERE id = %s AND goal_id = %s", (milestone_id, goal_id)
    )
    return cur.rowcount > 0
