"""Reads of memories straight from Postgres: by id, recent/browse/archived lists, namespaces,
diff since a time, and the links of a memory."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from exocortex.core.db.pool import Pool
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.records import MemoryRecord
from exocortex.retrieval.reads import repository

MAX_IDS = 100
MAX_LIST = 100
MAX_DIFF = 200
# recent and browse are the same list (browse is the agents' name for it).
VIEWS = ("recent", "browse", "archived")


@dataclass
class ListQuery:
    view: str = "recent"
    namespace: str | None = None
    limit: int = 20
    offset: int = 0
    tags: tuple[str, ...] = ()
    content_type: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    min_importance: float | None = None


@dataclass
class Link:
    memory_id: str
    link_type: str
    strength: float
    direction: str
    created_at: datetime
    preview: MemoryRecord


@dataclass
class Diff:
    created: list[MemoryRecord]
    updated: list[MemoryRecord]
    archived: list[MemoryRecord]


class ReadService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def get_memories(
        self, ids: list[str], *, record_use: bool = False
    ) -> tuple[list[MemoryRecord], list[str]]:
        """Rows in the order asked for, and the ids that do not exist."""
        if len(ids) > MAX_IDS:
            raise InvalidArgument(f"at most {MAX_IDS} ids per call", field="ids")
        unique = list(dict.fromkeys(ids))
        rows = await repository.get(self._pool, unique, record_use=record_use)
        found = [rows[i] for i in unique if i in rows]
        missing = [i for i in unique if i not in rows]
        return found, missing

    async def list_memories(self, q: ListQuery) -> tuple[list[MemoryRecord], int]:
        if q.view not in VIEWS:
            raise InvalidArgument(f"view must be one of {', '.join(VIEWS)}", field="view")
        if not 1 <= q.limit <= MAX_LIST:
            raise InvalidArgument(f"limit must be between 1 and {MAX_LIST}", field="limit")
        if q.offset < 0:
            raise InvalidArgument("offset must not be negative", field="offset")
        return await repository.page(
            self._pool,
            repository.ListFilter(
                archived=q.view == "archived",
                namespace=q.namespace,
                limit=q.limit,
                offset=q.offset,
                tags=q.tags,
                content_type=q.content_type,
                after=q.after,
                before=q.before,
                min_importance=q.min_importance,
            ),
        )

    async def namespaces(self) -> list[str]:
        return await repository.namespaces(self._pool)

    async def diff(self, since: datetime, limit: int, namespace: str | None) -> Diff:
        """Created after `since` (active); updated after it but created before (active);
        archived after it (inactive, created before)."""
        if not 1 <= limit <= MAX_DIFF:
            raise InvalidArgument(f"limit must be between 1 and {MAX_DIFF}", field="limit")
        parts = await repository.diff(self._pool, since, limit, namespace)
        return Diff(parts["created"], parts["updated"], parts["archived"])

    async def links(self, memory_id: str) -> list[Link]:
        found = await repository.links(self._pool, memory_id)
        if found is None:
            raise NotFound(f"memory {memory_id} not found", field="id")
        link_rows, others = found
        return [
            Link(
                memory_id=r.other,
                link_type=r.link_type,
                strength=float(r.strength),
                direction=r.direction,
                created_at=r.created_at,
                preview=others[r.other],
            )
            for r in link_rows
            if r.other in others
        ]
