"""The project snapshot: where a project stands, in one read.

Four searches for the project's name (recent activity in a time window, then decisions, open
threads and techniques by tag) and the namespace's active goals, all run at once. The searches
are compact: they only peek, so the search.performed recorder counts no access for them, and
their purpose marks them as the snapshot's own in the event.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from exocortex.core.db.pool import Pool
from exocortex.core.errors import InvalidArgument
from exocortex.core.repositories import goals as goal_rows
from exocortex.retrieval.search.query import SearchQuery
from exocortex.retrieval.search.results import ScoredMemory
from exocortex.retrieval.search.service import SearchService

Row = dict[str, Any]

PURPOSE = "project-snapshot"
DEFAULT_DAYS, MAX_DAYS = 14, 365
MAX_PROJECT_CHARS = 255
MAX_SECTION = 50
# The seed's sizes: ten recent memories, five of each tagged section.
DEFAULT_LIMITS = {
    "recent": 10,
    "decisions": 5,
    "open_threads": 5,
    "techniques": 5,
    "goals": 20,
}
SECTION_TAGS = {
    "decisions": ("decision",),
    "open_threads": ("plan", "todo", "next-steps", "in-progress"),
    "techniques": ("technique",),
}


@dataclass(frozen=True)
class SnapshotQuery:
    project: str
    namespace: str = ""
    # Zero: DEFAULT_DAYS.
    days: int = 0
    # Section → its size; zero or absent: DEFAULT_LIMITS.
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class ActiveGoal:
    goal: Row
    milestones: list[Row]
    progress_count: int


@dataclass
class Snapshot:
    project: str
    since: datetime
    recent: list[ScoredMemory]
    decisions: list[ScoredMemory]
    open_threads: list[ScoredMemory]
    techniques: list[ScoredMemory]
    goals: list[ActiveGoal]
    degraded: list[str] = field(default_factory=list)


def _limit(q: SnapshotQuery, section: str) -> int:
    name = f"{section}_limit"
    value = q.limits.get(section, 0) or DEFAULT_LIMITS[section]
    if not 1 <= value <= MAX_SECTION:
        raise InvalidArgument(f"{name} must be between 1 and {MAX_SECTION}", field=name)
    return value


def _project(q: SnapshotQuery) -> str:
    project = q.project.strip()
    if not project:
        raise InvalidArgument("project must not be empty", field="project")
    if len(project) > MAX_PROJECT_CHARS:
        raise InvalidArgument(
            f"project is longer than {MAX_PROJECT_CHARS} characters", field="project"
        )
    _no_nul(project, "project")
    return project


def _no_nul(value: str, name: str) -> None:
    # Postgres text cannot hold NUL, so no memory or goal has one; asking would fail in SQL.
    if "\x00" in value:
        raise InvalidArgument(f"{name} must not contain NUL characters", field=name)


def _days(q: SnapshotQuery) -> int:
    days = q.days or DEFAULT_DAYS
    if not 1 <= days <= MAX_DAYS:
        raise InvalidArgument(f"days must be between 1 and {MAX_DAYS}", field="days")
    return days


async def active_goals(pool: Pool, namespace: str, limit: int) -> list[ActiveGoal]:
    """Active goals with their milestones and progress counts (progress notes left out), in
    the order ListGoals answers (priority, then newest)."""
    async with pool.connection() as conn:
        goals = await goal_rows.list_goals(conn, namespace, "active", limit)
        if not goals:
            return []
        ids = [g["id"] for g in goals]
        milestones = await goal_rows.milestones_by_goal(conn, ids)
        counts = await goal_rows.progress_counts(conn, ids)
    return [ActiveGoal(g, milestones.get(g["id"], []), counts.get(g["id"], 0)) for g in goals]


class SnapshotService:
    def __init__(self, search: SearchService, pool: Pool) -> None:
        self._search = search
        self._pool = pool

    async def snapshot(self, q: SnapshotQuery) -> Snapshot:
        project = _project(q)
        since = datetime.now(UTC) - timedelta(days=_days(q))
        limits = {section: _limit(q, section) for section in DEFAULT_LIMITS}
        namespace = q.namespace or "default"
        _no_nul(namespace, "namespace")

        def find(
            section: str, tags: tuple[str, ...] = (), after: datetime | None = None
        ) -> SearchQuery:
            return SearchQuery(
                query=project,
                namespace=namespace,
                limit=limits[section],
                tags=tags,
                after=after,
                compact=True,
                purpose=PURPOSE,
            )

        queries = [find("recent", after=since)]
        queries += [find(section, tags) for section, tags in SECTION_TAGS.items()]
        outcomes, goals = await asyncio.gather(
            asyncio.gather(*(self._search.search(r) for r in queries)),
            active_goals(self._pool, namespace, limits["goals"]),
        )
        return Snapshot(
            project=project,
            since=since,
            recent=outcomes[0].results,
            decisions=outcomes[1].results,
            open_threads=outcomes[2].results,
            techniques=outcomes[3].results,
            goals=goals,
            degraded=list(dict.fromkeys(d for o in outcomes for d in o.degraded)),
        )
