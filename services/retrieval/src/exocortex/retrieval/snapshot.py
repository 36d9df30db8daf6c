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

import psycopg
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg_pool import AsyncConnectionPool

from exocortex.core.errors import InvalidArgument
from exocortex.proto.v1 import goals_pb2, retrieval_pb2
from exocortex.retrieval.goals import Row, active_goals
from exocortex.retrieval.search import ScoredMemory, SearchService

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


@dataclass
class Snapshot:
    project: str
    since: datetime
    recent: list[ScoredMemory]
    decisions: list[ScoredMemory]
    open_threads: list[ScoredMemory]
    techniques: list[ScoredMemory]
    goals: list[goals_pb2.Goal]
    degraded: list[str] = field(default_factory=list)


def _limit(request: retrieval_pb2.ProjectSnapshotRequest, section: str) -> int:
    name = f"{section}_limit"
    value = int(getattr(request, name)) or DEFAULT_LIMITS[section]
    if not 1 <= value <= MAX_SECTION:
        raise InvalidArgument(f"{name} must be between 1 and {MAX_SECTION}", field=name)
    return value


def _project(request: retrieval_pb2.ProjectSnapshotRequest) -> str:
    project = request.project.strip()
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


def _days(request: retrieval_pb2.ProjectSnapshotRequest) -> int:
    days = request.days or DEFAULT_DAYS
    if not 1 <= days <= MAX_DAYS:
        raise InvalidArgument(f"days must be between 1 and {MAX_DAYS}", field="days")
    return days


class SnapshotService:
    def __init__(
        self, search: SearchService, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]
    ) -> None:
        self._search = search
        self._pool = pool

    async def snapshot(self, request: retrieval_pb2.ProjectSnapshotRequest) -> Snapshot:
        project = _project(request)
        since = datetime.now(UTC) - timedelta(days=_days(request))
        limits = {section: _limit(request, section) for section in DEFAULT_LIMITS}
        namespace = request.namespace or "default"
        _no_nul(namespace, "namespace")

        def find(section: str, tags: tuple[str, ...] = ()) -> retrieval_pb2.SearchRequest:
            return retrieval_pb2.SearchRequest(
                query=project,
                namespace=namespace,
                limit=limits[section],
                tags=tags,
                compact=True,
                purpose=PURPOSE,
            )

        recent = find("recent")
        recent.after.CopyFrom(_stamp(since))
        requests = [recent] + [find(section, tags) for section, tags in SECTION_TAGS.items()]
        outcomes, goals = await asyncio.gather(
            asyncio.gather(*(self._search.search(r) for r in requests)),
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


def _stamp(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp
