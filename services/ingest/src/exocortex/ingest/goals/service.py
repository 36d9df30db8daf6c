"""Goals, their ordered milestones and progress links: the rules (the SQL is in
``exocortex.core.repositories.goals``, shared with the read side).

Progress notes are ordinary memories (stored through the normal write path, so they are embedded
and indexed) linked to the goal in ``goal_links``. Tagged ``goal-progress`` as the original's
progress notes were, so an agent can find or filter them by tag, and explicitly not metadata all
the same (that tag alone would make them so), so a logged step is not demoted in search.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.domain.metadata import GOAL_PROGRESS_TAG
from exocortex.core.domain.text import strip_private
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.ids import new_id
from exocortex.core.repositories import goals as repository
from exocortex.core.repositories import memories
from exocortex.ingest.goals.model import GoalChanges, GoalView, MilestoneChanges, ProgressNote
from exocortex.ingest.store import validation
from exocortex.ingest.store.model import MemoryInput, Row, StoreResult
from exocortex.ingest.store.service import StoreService

GOAL_STATUSES = ("active", "completed", "stalled", "abandoned")
PRIORITIES = ("low", "medium", "high", "critical")
MILESTONE_STATUSES = ("pending", "in_progress", "completed")
MAX_TITLE = 500
MAX_DESCRIPTION = 20_000
MAX_LIST = 500
MAX_PROGRESS = 100


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
    def __init__(self, pool: Pool, store: StoreService) -> None:
        self._pool = pool
        self._store = store

    async def list(self, namespace: str, status: str, limit: int) -> list[GoalView]:
        namespace = validation.check_namespace(namespace)
        status = status or "active"
        if status != "all":
            validation.check_choice(status, GOAL_STATUSES, "status")
        limit = limit if 0 < limit <= MAX_LIST else MAX_LIST
        async with self._pool.connection() as conn:
            goals = await repository.list_goals(conn, namespace, status, limit)
            ids = [g["id"] for g in goals]
            by_goal = await repository.milestones_by_goal(conn, ids)
            counts = await repository.progress_counts(conn, ids)
        return [GoalView(g, by_goal.get(g["id"], []), [], counts.get(g["id"], 0)) for g in goals]

    async def get(self, goal_id: str, progress_limit: int = 10) -> GoalView:
        limit = progress_limit if 0 < progress_limit <= MAX_PROGRESS else 10
        async with self._pool.connection() as conn:
            goal = await _goal(conn, goal_id)
            milestones = (await repository.milestones_by_goal(conn, [goal_id])).get(goal_id, [])
            ids = await repository.progress_memory_ids(conn, goal_id, limit)
            found = await memories.get_records(conn, ids)
            count = (await repository.progress_counts(conn, [goal_id])).get(goal_id, 0)
        progress = [found[i] for i in ids if i in found]
        return GoalView(goal, milestones, progress, count)

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
            await repository.insert_goal(
                conn,
                goal_id,
                namespace=namespace,
                title=title,
                description=description,
                status=status,
                priority=priority,
                deadline=deadline,
                metadata=metadata,
            )
        return await self.get(goal_id)

    async def update(self, goal_id: str, changes: GoalChanges) -> GoalView:
        _check_clear(changes.clear, ("description", "deadline"))
        title = check_title(changes.title) if changes.title is not None else None
        description = (
            check_description(changes.description) if changes.description is not None else None
        )
        priority = (
            validation.check_choice(changes.priority, PRIORITIES, "priority")
            if changes.priority is not None
            else None
        )
        status = (
            validation.check_choice(changes.status, GOAL_STATUSES, "status")
            if changes.status is not None
            else None
        )
        async with self._pool.connection() as conn, conn.transaction():
            goal = await _goal(conn, goal_id, lock=True)
            metadata = None
            if changes.metadata is not None:
                metadata = dict(goal["metadata"] or {})
                for key, value in changes.metadata.items():
                    if value is None:
                        metadata.pop(key, None)
                    else:
                        metadata[key] = value
            await repository.update_goal(
                conn,
                goal_id,
                title=title,
                description=description,
                priority=priority,
                deadline=changes.deadline,
                clear=changes.clear,
                status=status,
                metadata=metadata,
            )
        return await self.get(goal_id)

    async def delete(self, goal_id: str) -> None:
        async with self._pool.connection() as conn:
            if not await repository.delete_goal(conn, goal_id):
                raise NotFound(f"goal {goal_id} not found", field="id")

    async def log_progress(self, note: ProgressNote) -> tuple[StoreResult, GoalView]:
        """Store the note through the normal write path, link it to the goal, and return both."""
        async with self._pool.connection() as conn:
            namespace = str((await _goal(conn, note.goal_id))["namespace"])
        stored = await self._store.store(
            MemoryInput(
                content=note.content,
                namespace=namespace,
                tags=tuple(dict.fromkeys([*note.tags, GOAL_PROGRESS_TAG])),
                content_type="note",
                metadata_json=json.dumps({"goal_id": note.goal_id}),
                is_metadata=False,
                importance=note.importance,
            )
        )
        async with self._pool.connection() as conn, conn.transaction():
            await _goal(conn, note.goal_id, lock=True)
            await repository.link_progress(conn, note.goal_id, stored.memory.id)
            await repository.touch_goal(conn, note.goal_id)
        return stored, await self.get(note.goal_id)

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
            await _goal(conn, goal_id, lock=True)
            if order is None:
                order = await repository.next_milestone_order(conn, goal_id)
            await repository.insert_milestone(
                conn, new_id(), goal_id, title=title, status=status, order=order, deadline=deadline
            )
            await repository.touch_goal(conn, goal_id)
        return await self.get(goal_id)

    async def update_milestone(
        self, goal_id: str, milestone_id: str, changes: MilestoneChanges
    ) -> GoalView:
        _check_clear(changes.clear, ("deadline",))
        title = check_title(changes.title) if changes.title is not None else None
        if changes.order is not None and changes.order < 0:
            raise InvalidArgument("order must be 0 or more", field="order")
        status = (
            validation.check_choice(changes.status, MILESTONE_STATUSES, "status")
            if changes.status is not None
            else None
        )
        async with self._pool.connection() as conn, conn.transaction():
            await _goal(conn, goal_id, lock=True)
            found = await repository.update_milestone(
                conn,
                goal_id,
                milestone_id,
                title=title,
                order=changes.order,
                deadline=changes.deadline,
                clear=changes.clear,
                status=status,
            )
            if not found:
                raise _no_milestone(goal_id, milestone_id)
            await repository.touch_goal(conn, goal_id)
        return await self.get(goal_id)

    async def remove_milestone(self, goal_id: str, milestone_id: str) -> GoalView:
        async with self._pool.connection() as conn, conn.transaction():
            await _goal(conn, goal_id, lock=True)
            if not await repository.delete_milestone(conn, goal_id, milestone_id):
                raise _no_milestone(goal_id, milestone_id)
            await repository.touch_goal(conn, goal_id)
        return await self.get(goal_id)


async def _goal(conn: DictConnection, goal_id: str, *, lock: bool = False) -> Row:
    # A goal outside the caller's namespace scope reads as missing.
    goal = await repository.get_goal(conn, goal_id, lock=lock)
    if goal is None:
        raise NotFound(f"goal {goal_id} not found", field="id")
    return goal


def _no_milestone(goal_id: str, milestone_id: str) -> NotFound:
    return NotFound(f"milestone {milestone_id} not found in goal {goal_id}", field="milestone_id")
