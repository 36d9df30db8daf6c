"""The projector and an ``enriched`` event: the enrichment changed keywords only, so the vector
point is not rewritten (a rewrite takes it out of the HNSW graph); the keyword index gets the
new version, and the waiters are released at it. Any other event in the same batch for the
memory means a full write."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from exocortex.core.domain.vectors import to_bytes
from exocortex.core.records import MemoryRecord
from exocortex.indexes.base import IndexDocument
from exocortex.retrieval.projection import repository
from exocortex.retrieval.projection.projector import MemoryChange, Projector
from exocortex.retrieval.projection.waiters import IndexedVersions


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


class FakeIndex:
    def __init__(self) -> None:
        self.upserted: list[list[str]] = []
        self.flushes = 0

    async def upsert(self, docs: Sequence[IndexDocument]) -> None:
        self.upserted.append([d.memory_id for d in docs])

    async def delete(self, memory_ids: Sequence[str]) -> None:
        pass

    async def flush(self) -> None:
        self.flushes += 1


@pytest.fixture
def rows(monkeypatch: pytest.MonkeyPatch) -> dict[str, MemoryRecord]:
    table: dict[str, MemoryRecord] = {}

    async def with_chunks(_pool: Any, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return {
            r.id: r for r in table.values() if r.id in ids or (r.parent_id and r.parent_id in ids)
        }

    monkeypatch.setattr(repository, "with_chunks", with_chunks)
    return table


async def test_an_enriched_event_leaves_the_vector_alone(rows: dict[str, MemoryRecord]) -> None:
    rows["a"] = _record("a", 2)
    rows["c"] = _record("c", 1, parent_id="b")  # a chunk of b
    rows["b"] = _record("b", 2)
    vector, keyword, versions = FakeIndex(), FakeIndex(), IndexedVersions()
    projector = Projector(None, vector, keyword, versions)  # type: ignore[arg-type]
    await projector.project(
        [MemoryChange("a", 2, (), "enriched"), MemoryChange("b", 2, (), "enriched")]
    )
    assert vector.upserted == []
    assert keyword.upserted == [["a", "b"]]
    assert keyword.flushes == 1
    assert versions.get("a") == 2
    assert versions.get("b") == 2


async def test_any_other_event_in_the_batch_writes_both(rows: dict[str, MemoryRecord]) -> None:
    rows["a"] = _record("a", 2)
    vector, keyword = FakeIndex(), FakeIndex()
    projector = Projector(None, vector, keyword, IndexedVersions())  # type: ignore[arg-type]
    await projector.project(
        [MemoryChange("a", 1, (), "stored"), MemoryChange("a", 2, (), "enriched")]
    )
    assert vector.upserted == [["a"]]
    assert keyword.upserted == [["a"]]


def test_the_vector_may_hold_the_version_before_an_enrichment_only() -> None:
    assert repository.vector_versions(5, True) == (5, 4)
    assert repository.vector_versions(5, False) == (5,)
    assert repository.vector_versions(1, True) == (1,)
