"""What the indexes hold: whether a memory's version is searchable yet, and document counts."""

from __future__ import annotations

from dataclasses import dataclass

from exocortex.core.errors import InvalidArgument, Unavailable
from exocortex.indexes.base import KeywordIndex, VectorIndex
from exocortex.retrieval.projection.reconciler import Reconciler, ReconcileReport
from exocortex.retrieval.projection.waiters import IndexedVersions

MAX_AWAIT_MS = 30_000


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
    ) -> None:
        self._versions = versions
        self._vector = vector_index
        self._keyword = keyword_index
        self._reconciler = reconciler

    async def reconcile(self) -> ReconcileReport:
        """One reconciler run now (after the projector's backlog settles)."""
        if self._reconciler is None:
            raise Unavailable("this retrieval process has no reconciler")
        await self._reconciler.settle()
        return await self._reconciler.run_once()

    async def await_indexed(self, memory_id: str, version: int, timeout_ms: int) -> bool:
        """Whether ``version`` of the memory is searchable, waiting up to ``timeout_ms``."""
        if not 0 <= timeout_ms <= MAX_AWAIT_MS:
            raise InvalidArgument(f"timeout_ms must be 0..{MAX_AWAIT_MS}", field="timeout_ms")
        if self._versions.get(memory_id) is None:
            # Not projected by this process (yet, or before a restart): the index may have it.
            stored = await self._vector.versions([memory_id])
            if stored.get(memory_id, 0) >= version:
                return True
        indexed = await self._versions.wait(memory_id, version, timeout_ms / 1000.0)
        if not indexed:
            # This process may have projected it before a restart: ask the index itself.
            stored = await self._vector.versions([memory_id])
            indexed = stored.get(memory_id, 0) >= version
        return indexed

    async def status(self) -> IndexStatus:
        return IndexStatus(
            vector_documents=await self._vector.count(),
            keyword_documents=await self._keyword.count(),
            vector_backend=self._vector.name,
            keyword_backend=self._keyword.name,
        )
