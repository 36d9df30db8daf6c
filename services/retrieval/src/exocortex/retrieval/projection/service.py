"""What the indexes hold: whether a memory's version is searchable yet, and document counts."""

from __future__ import annotations

from dataclasses import dataclass

from exocortex.core.errors import InvalidArgument, Unavailable
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.retrieval.projection.ahead import ProjectionAhead
from exocortex.retrieval.projection.reconciler import Reconciler, ReconcileReport
from exocortex.retrieval.projection.waiters import (
    POLL_SECONDS,
    IndexedVersions,
    wait_until_all_indexed,
    wait_until_indexed,
)

MAX_AWAIT_MS = 30_000
# A bulk write's new memories in one wait (an import request holds at most 10,000).
MAX_AWAIT_IDS = 10_000


@dataclass(frozen=True)
class IndexStatus:
    vector_documents: int
    keyword_documents: int
    vector_backend: str
    keyword_backend: str


class IndexService:
    def __init__(
        self,
        versions: IndexedVersions,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        reconciler: Reconciler | None = None,
        *,
        ahead: ProjectionAhead | None = None,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self._versions = versions
        self._vector = vector_index
        self._keyword = keyword_index
        self._reconciler = reconciler
        self._ahead = ahead
        self._poll_seconds = poll_seconds

    async def reconcile(self) -> ReconcileReport:
        """One reconciler run now (after the projector's backlog settles)."""
        if self._reconciler is None:
            raise Unavailable("this retrieval process has no reconciler")
        await self._reconciler.settle()
        return await self._reconciler.run_once()

    async def await_indexed(
        self, memory_id: str, version: int, timeout_ms: int, *, by_event: bool = False
    ) -> bool:
        """Whether ``version`` of the memory is searchable, waiting up to ``timeout_ms``
        (released by this replica's projector or another's announcement, see waiters, or by a
        projection ahead of the event unless ``by_event``: a bulk write's waits)."""
        if not 0 <= timeout_ms <= MAX_AWAIT_MS:
            raise InvalidArgument(f"timeout_ms must be 0..{MAX_AWAIT_MS}", field="timeout_ms")
        ahead = self._ahead is not None and timeout_ms > 0 and not by_event
        if ahead and (self._versions.get(memory_id) or 0) < version:
            assert self._ahead is not None
            # Committed before anyone waits for it: project it now rather than wait for its
            # event (see ahead), which releases the wait without asking the index first.
            self._ahead.request(memory_id, version)
        return await wait_until_indexed(
            self._versions,
            self._stored_version,
            memory_id,
            version,
            timeout_ms / 1000.0,
            poll_seconds=self._poll_seconds,
            ask_first=not ahead,
        )

    async def await_all_indexed(self, memory_ids: list[str], version: int, timeout_ms: int) -> bool:
        """Whether ``version`` of every one of ``memory_ids`` is searchable, waiting up to
        ``timeout_ms`` in all (a bulk write's new memories: released by their events, never
        projected ahead of them)."""
        if not 0 <= timeout_ms <= MAX_AWAIT_MS:
            raise InvalidArgument(f"timeout_ms must be 0..{MAX_AWAIT_MS}", field="timeout_ms")
        if len(memory_ids) > MAX_AWAIT_IDS:
            raise InvalidArgument(f"at most {MAX_AWAIT_IDS} memory_ids", field="memory_ids")
        return await wait_until_all_indexed(
            self._versions,
            self._stored_versions,
            memory_ids,
            version,
            timeout_ms / 1000.0,
            poll_seconds=self._poll_seconds,
        )

    async def _stored_versions(self, memory_ids: list[str]) -> dict[str, int]:
        """The versions search sees now. The keyword index holds every searchable memory (a
        chunked parent has no vector) and is committed after both indexes were written, so its
        versions are the ones both serve. An index that cannot be read holds nothing searchable
        yet: the wait goes on and the answer at the deadline is ``False``, not an error."""
        try:
            return await self._keyword.versions(memory_ids)
        except Exception:
            return {}

    async def _stored_version(self, memory_id: str) -> int:
        return (await self._stored_versions([memory_id])).get(memory_id, 0)

    async def status(self) -> IndexStatus:
        return IndexStatus(
            vector_documents=await self._vector.count(),
            keyword_documents=await self._keyword.count(),
            vector_backend=self._vector.name,
            keyword_backend=self._keyword.name,
        )
