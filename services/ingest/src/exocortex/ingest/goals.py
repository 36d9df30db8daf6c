"""Goals, their ordered milestones and progress links: the rules and the SQL.

Progress notes are ordinary memories (stored through the normal write path, so they are embedded
and indexed) linked to the goal in ``goal_links``. They are not tagged, so nothing marks them as
metadata and search does not demote them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exocortex.core import scope
from exocortex.core.db.pool import Pool
from exocortex.core.domain.text import strip_private
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.ids import new_id
from exocortex.core.repositories import memories
from exocortex.ingest import validation

Row = dict[str, Any]

GOAL_STATUSES = ("active", "completed", "stalled", "abandoned")
PRIORITIES = ("low", "medium", "high", "critical")
MILESTONE_STATUSES = ("pending", "in_progress", "completed")
MAX_TITLE = 500
MAX_DESCRIPTION = 20_000
MAX_LIST = 500
MAX_PROGRESS = 100

_GOAL_COLUMNS = (
    "id, namespace, title, description, status, priority, deadline, metadata, completed_at, "
    "created_at, updated_at"
)


@dataclass
class GoalView:
    goal: Row
    milestones: list[Row] = field(default_factory=list)
    progress: list[Row] = field(default_factory=list)
    progress_count: int = 0


@dataclass
class GoalChanges:
    """A partial update: only attributes that are not None change; ``clear`` nulls fields."""

    title: str | None = None
    description: str | None = None
    status: str | None = None
    priority: str | None = None
    deadline: datetime | None = None
    metadata: dict[str, Any] | None = None
    clear: tuple[str, ...] = ()


@dataclass
class MilestoneChanges:
    title: str | None = None
    status: str | None = None
    order: int | None = None
    deadline: datetime | None = None
    clear: tuple[str, ...] = ()


def check_title(title: str, name: str = "title") -> str:
    value = validation.required_text(title, name)
    if not value:
        raise InvalidArgument(f"{name} must not be empty", field=name)
    if len(value) > MAX_TITLE:
        raise InvalidArgument(f"{name} is at most {MAX_TITLE} characters", field=name)
    return value


def check_description(description: str) -> str:
    if len(description) > MAX_DESCRIPTION:
        raise InvalidArgument(
            f"description is at most {MAX_DESCRIPTION} characters", field="description"
        )
    return strip_private(description)


def _check_clear(clear: tuple[str, ...], allowed: tuple[str, ...]) -> None:
    for i, name in enumerate(clear):
        if name not in allowed:
            raise InvalidArgument(
                f"only {', '.join(allowed)} can be set to null", field=f"clear.{i}"
            )


class GoalService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def list(self, namespace: str, status: str, limit: int) -> list[GoalView]:
        namespace = validation.check_namespace(namespace)
        status = status or "active"
        if status != "all":
            validation.check_choice(status, GOAL_STATUSES, "status")
        limit = limit if 0 < limit <= MAX_LIST else MAX_LIST
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                f"SELECT {_GOAL_COLUMNS} FROM goals WHERE namespace = %s "
                "AND (%s = 'all' OR status = %s) "
                "ORDER BY CASE priority WHEN 'critical' THEN 0 WHEN 'high' THEN 1 "
                "WHEN 'medium' THEN 2 ELSE 3 END, created_at DESC, id LIMIT %s",
                (namespace, status, status, limit),
            )
            goals = await cur.fetchall()
            ids = [g["id"] for g in goals]
            cur = await conn.execute(
                "SELECT * FROM goal_milestones WHERE goal_id = ANY(%s) "
                "ORDER BY sort_order, created_at, id",
                (ids,),
            )
            by_goal: dict[str, list[Row]] = {}
            for m in await cur.fetchall():
                by_goal.setdefault(m["goal_id"], []).append(m)
            cur = await conn.execute(
                "SELECT goal_id, count(*) AS n FROM goal_links WHERE goal_id = ANY(%s) "
                "GROUP BY goal_id",
                (ids,),
            )
            counts = {r["goal_id"]: int(r["n"]) for r in await cur.fetchall()}
        return [GoalView(g, by_goal.get(g["id"], []), [], counts.get(g["id"], 0)) for g in goals]

    async def get(self, goal_id: str, progress_limit: int = 10) -> GoalView:
        limit = progress_limit if 0 < progress_limit <= MAX_PROGRESS else 10
        async with self._pool.connection() as conn:
            goal = await self._goal(conn, goal_id)
            cur = await conn.execute(
                "SELECT * FROM goal_milestones WHERE goal_id = %s "
                "ORDER BY sort_order, created_at, id",
                (goal_id,),
            )
            milestones = await cur.fetchall()
            cur = await conn.execute(
                "SELECT l.memory_id FROM goal_links l JOIN memories m ON m.id = l.memory_id "
                "WHERE l.goal_id = %s ORDER BY m.created_at DESC, m.id DESC LIMIT %s",
                (goal_id, limit),
            )
            ids = [r["memory_id"] for r in await cur.fetchall()]
            found = await memories.get_many(conn, ids)
            cur = await conn.execute(
                "SELECT count(*) AS n FROM goal_links WHERE goal_id = %s", (goal_id,)
            )
            count_row = await cur.fetchone()
        progress = [found[i] for i in ids if i in found]
        return GoalView(goal, milestones, progress, int(count_row["n"]) if count_row else 0)

    async def create(
        self,
        *,
        namespace: str,
        title: str,
        description: str | None,
        status: str | None,
        priority: str | None,
        deadline: datetime | None,
        metadata: dict[str, Any],
    ) -> GoalView:
        namespace = validation.check_namespace(namespace)
        title = check_title(title)
        if description is not None:
            description = check_description(description)
        status = validation.check_choice(status or "active", GOAL_STATUSES, "status")
        priority = validation.check_choice(priority or "medium", PRIORITIES, "priority")
        goal_id = new_id()
        async with self._pool.connection() as conn:
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
        return await self.get(goal_id)

    async def update(self, goal_id: str, changes: GoalChanges) -> GoalView:
        _check_clear(changes.clear, ("description", "deadline"))
        sets: list[str] = []
        params: list[Any] = []
        if changes.title is not None:
            sets.append("title = %s")
            params.append(check_title(changes.title))
        if changes.description is not None:
            sets.append("description = %s")
            params.append(check_description(changes.description))
        if changes.priority is not None:
            sets.append("priority = %s")
            params.append(validation.check_choice(changes.priority, PRIORITIES, "priority"))
        if changes.deadline is not None:
            sets.append("deadline = %s")
            params.append(changes.deadline)
        for name in changes.clear:
            sets.append(f"{name} = NULL")
        if changes.title is not None or changes.description is not None or changes.clear:
            # The embedding is of "title: description"; it is recomputed lazily when needed.
            sets.append("embedding = NULL, embedding_model = NULL")
        if changes.status is not None:
            status = validation.check_choice(changes.status, GOAL_STATUSES, "status")
            # Completing stamps completed_at once; any other status clears it.
            sets.append(
                "completed_at = CASE WHEN %s = 'completed' "
                "THEN coalesce(completed_at, now()) END, status = %s"
            )
            params.extend([status, status])
        async with self._pool.connection() as conn, conn.transaction():
            goal = await self._goal(conn, goal_id, lock=True)
            if changes.metadata is not None:
                merged = dict(goal["metadata"] or {})
                for key, value in changes.metadata.items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                sets.append("metadata = %s")
                params.append(json.dumps(merged))
            sets.append("updated_at = now()")
            await conn.execute(
                f"UPDATE goals SET {', '.join(sets)} WHERE id = %s", (*params, goal_id)
            )
        return await self.get(goal_id)

    async def delete(self, goal_id: str) -> None:
        async with self._pool.connection() as conn:
            cond, scoped = scope.sql_filter("goals")
            cur = await conn.execute(
                f"DELETE FROM goals WHERE id = %s AND {cond}", (goal_id, *scoped)
            )
            if cur.rowcount == 0:
                raise NotFound(f"goal {goal_id} not found", field="id")

    async def namespace_of(self, goal_id: str) -> str:
        async with self._pool.connection() as conn:
            goal = await self._goal(conn, goal_id)
        return str(goal["namespace"])

    async def link_progress(self, goal_id: str, memory_id: str) -> None:
        """An explicit link: the memory is progress on the goal, by the caller's word."""
        async with self._pool.connection() as conn, conn.transaction():
            await self._goal(conn, goal_id, lock=True)
            await conn.execute(
                "INSERT INTO goal_links (goal_id, memory_id, relevance, kind) "
                "VALUES (%s, %s, 1.0, 'explicit') ON CONFLICT (goal_id, memory_id) "
                "DO UPDATE SET kind = 'explicit', relevance = 1.0",
                (goal_id, memory_id),
            )
            await conn.execute("UPDATE goals SET updated_at = now() WHERE id = %s", (goal_id,))

    async def add_milestone(
        self,
        goal_id: str,
        *,
        title: str,
        order: int | None,
        deadline: datetime | None,
        status: str | None,
    ) -> GoalView:
        title = check_title(title)
        status = validation.check_choice(status or "pending", MILESTONE_STATUSES, "status")
        if order is not None and order < 0:
            raise InvalidArgument("order must be 0 or more", field="order")
        async with self._pool.connection() as conn, conn.transaction():
            await self._goal(conn, goal_id, lock=True)
            if order is None:
                # After the last one; the first is 1, as the original numbered them.
                cur = await conn.execute(
                    "SELECT coalesce(max(sort_order), 0) + 1 AS n FROM goal_milestones "
                    "WHERE goal_id = %s",
                    (goal_id,),
                )
                row = await cur.fetchone()
                order = int(row["n"]) if row else 1
            await conn.execute(
                "INSERT INTO goal_milestones (id, goal_id, title, status, sort_order, deadline, "
                "completed_at) VALUES (%s, %s, %s, %s, %s, %s, "
                "CASE WHEN %s = 'completed' THEN now() END)",
                (new_id(), goal_id, title, status, order, deadline, status),
            )
            await conn.execute("UPDATE goals SET updated_at = now() WHERE id = %s", (goal_id,))
        return await self.get(goal_id)

    async def update_milestone(
        self, goal_id: str, milestone_id: str, changes: MilestoneChanges
    ) -> GoalView:
        _check_clear(changes.clear, ("deadline",))
        sets: list[str] = []
        params: list[Any] = []
        if changes.title is not None:
            sets.append("title = %s")
            params.append(check_title(changes.title))
        if changes.order is not None:
            if changes.order < 0:
                raise InvalidArgument("order must be 0 or more", field="order")
            sets.append("sort_order = %s")
            params.append(changes.order)
        if changes.deadline is not None:
            sets.append("deadline = %s")
            params.append(changes.deadline)
        for name in changes.clear:
            sets.append(f"{name} = NULL")
        if changes.status is not None:
            status = validation.check_choice(changes.status, MILESTONE_STATUSES, "status")
            sets.append(
                "completed_at = CASE WHEN %s = 'completed' "
                "THEN coalesce(completed_at, now()) END, status = %s"
            )
            params.extend([status, status])
        sets.append("updated_at = now()")
        async with self._pool.connection() as conn, conn.transaction():
            await self._goal(conn, goal_id, lock=True)
            cur = await conn.execute(
                f"UPDATE goal_milestones SET {', '.join(sets)} WHERE id = %s AND goal_id = %s",
                (*params, milestone_id, goal_id),
            )
            if cur.rowcount == 0:
                raise NotFound(
                    f"milestone {milestone_id} not found in goal {goal_id}", field="milestone_id"
                )
            await conn.execute("UPDATE goals SET updated_at = now() WHERE id = %s", (goal_id,))
        return await self.get(goal_id)

    async def remove_milestone(self, goal_id: str, milestone_id: str) -> GoalView:
        async with self._pool.connection() as conn, conn.transaction():
            await self._goal(conn, goal_id, lock=True)
            cur = await conn.execute(
                "DELETE FROM goal_milestones WHERE id = %s AND goal_id = %s",
                (milestone_id, goal_id),
            )
            if cur.rowcount == 0:
                raise NotFound(
                    f"milestone {milestone_id} not found in goal {goal_id}", field="milestone_id"
                )
            await conn.execute("UPDATE goals SET updated_at = now() WHERE id = %s", (goal_id,))
        return await self.get(goal_id)

    @staticmethod
    async def _goal(conn: Any, goal_id: str, *, lock: bool = False) -> Row:
        suffix = " FOR UPDATE" if lock else ""
        # A goal outside the caller's namespace scope reads as missing.
        cond, params = scope.sql_filter("goals")
        cur = await conn.execute(
            f"SELECT {_GOAL_COLUMNS} FROM goals WHERE id = %s AND {cond}{suffix}",
            (goal_id, *params),
        )
        goal: Row | None = await cur.fetchone()
        if goal is None:
            raise NotFound(f"goal {goal_id} not found", field="id")
        return goal
