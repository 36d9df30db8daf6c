"""What the projector's unit tests share: memory rows, a table of them the projector reads
instead of Postgres, and an index that records what it was told."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from exocortex.core.domain.vectors import to_bytes
from exocortex.core.records import MemoryRecord
from exocortex.indexes.base import IndexDocument
from exocortex.retrieval.projection import repository

Record = Callable[..., MemoryRecord]


def _record(memory_id: str, version: int, parent_id: str | None = None) -> MemoryRecord:
    now = datetime.now(UTC)
    return MemoryRecord(
        id=memory_id, namespace="ns", content="text", content_type="note", source="api",
        source_uri=None, importance=0.5, valence=0.0, is_active=True, is_metadata=False,
        parent_id=parent_id, chunk_index=0 if parent_id else None, consolidated_into=None,
        superseded_by=None, content_hash="h", keywords="k", embedding_model="m",
        access_count=0, last_accessed_at=None, useful_count=0, expires_at=None, provider=None,
        model_id=None, model_name=None, agent=None, session_id=None, conversation_id=None,
        metadata={}, enrichment_status="done", created_at=now, updated_at=now, version=version,
        embedding=to_bytes(np.ones(4, dtype=np.float32)),
    )  # fmt: skip


class RecordingIndex:
    """What the projector writes, and how often it was committed."""

    name = "recording"

    def __init__(self) -> None:
        self.upserted: list[list[str]] = []
        self.deleted: list[list[str]] = []
        self.flushes = 0

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        self.upserted.append([d.memory_id for d in docs])

    async def delete(self, memory_ids: Sequence[str]) -> None:
        self.deleted.append(list(memory_ids))

    async def flush(self) -> None:
        self.flushes += 1

    async def versions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        return {}

    async def close(self) -> None:
        pass


@pytest.fixture
def record() -> Record:
    """A memory row: ``record(id, version, parent_id=None)``."""
    return _record


@pytest.fixture
def index() -> type[RecordingIndex]:
    """The recording index class (``index()`` makes one)."""
    return RecordingIndex


@pytest.fixture
def rows(monkeypatch: pytest.MonkeyPatch) -> dict[str, MemoryRecord]:
    """The table the projector reads (a memory and its chunks), in place of Postgres."""
    table: dict[str, MemoryRecord] = {}

    async def with_chunks(_pool: Any, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return {
            r.id: r for r in table.values() if r.id in ids or (r.parent_id and r.parent_id in ids)
        }

    monkeypatch.setattr(repository, "with_chunks", with_chunks)
    return table
