"""Projection ahead of the event: a memory projected from its row at once is searchable and its
waiters are released without its event; the event that comes later at the same version writes
nothing again and is acked only once a keyword commit holds the write. A newer event, one with
chunks, and a memory not projected ahead are projected as usual."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from exocortex.core.domain.vectors import to_bytes
from exocortex.core.records import MemoryRecord
from exocortex.indexes.base import IndexDocument
from exocortex.indexes.shared_commits import SharedCommits
from exocortex.retrieval.projection import repository
from exocortex.retrieval.projection.ahead import ProjectionAhead
from exocortex.retrieval.projection.projector import REMOVED_VERSION, MemoryChange, Projector
from exocortex.retrieval.projection.service import IndexService
from exocortex.retrieval.projection.waiters import IndexedVersions


def _record(memory_id: str, version: int) -> MemoryRecord:
    now = datetime.now(UTC)
    return MemoryRecord(
        id=memory_id, namespace="ns", content="text", content_type="note", source="api",
        source_uri=None, importance=0.5, valence=0.0, is_active=True, is_metadata=False,
        parent_id=None, chunk_index=None, consolidated_into=None,
        superseded_by=None, content_hash="h", keywords="k", embedding_model="m",
        access_count=0, last_accessed_at=None, useful_count=0, expires_at=None, provider=None,
        model_id=None, model_name=None, agent=None, session_id=None, conversation_id=None,
        metadata={}, enrichment_status="done", created_at=now, updated_at=now, version=version,
        embedding=to_bytes(np.ones(4, dtype=np.float32)),
    )  # fmt: skip


class FakeIndex:
    """What the projector writes, and (keyword) how often it was committed."""

    name = "fake"

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
def rows(monkeypatch: pytest.MonkeyPatch) -> dict[str, MemoryRecord]:
    table: dict[str, MemoryRecord] = {}

    async def with_chunks(_pool: Any, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        return {r.id: r for r in table.values() if r.id in ids}

    monkeypatch.setattr(repository, "with_chunks", with_chunks)
    return table


async def _project(projector: Projector, keyword: SharedCommits, *events: MemoryChange) -> None:
    """Project ``events``, committing (as a search would) until the batch is acked."""
    batch = asyncio.create_task(projector.project(list(events)))
    while not batch.done():
        await keyword.flush()
        await asyncio.sleep(0.01)
    await batch


Parts = tuple[Projector, FakeIndex, FakeIndex, SharedCommits, IndexedVersions]


@pytest.fixture
async def parts() -> Parts:
    vector, inner = FakeIndex(), FakeIndex()
    keyword = SharedCommits(inner, delay=60)  # type: ignore[arg-type]
    versions = IndexedVersions()
    projector = Projector(None, vector, keyword, versions)  # type: ignore[arg-type]
    return projector, vector, inner, keyword, versions


async def test_a_memory_projected_ahead_is_released_and_its_event_writes_nothing(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, inner, keyword, versions = parts
    rows["a"] = _record("a", 1)
    await projector.project_now({"a": 1})
    assert vector.upserted == [["a"]]
    assert inner.upserted == [["a"]]
    assert versions.get("a") == 1
    assert inner.flushes == 0  # shown, not committed: the next search commits it

    event = asyncio.create_task(projector.project([MemoryChange("a", 1, (), "stored")]))
    await asyncio.sleep(0.05)
    assert not event.done(), "the event was acked before a commit held the write"
    await keyword.flush()
    await event
    assert vector.upserted == [["a"]]
    assert inner.upserted == [["a"]]
    await keyword.close()


async def test_a_newer_event_and_one_with_chunks_are_projected_as_usual(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = _record("a", 1)
    rows["b"] = _record("b", 1)
    await projector.project_now({"a": 1, "b": 1})
    rows["a"] = _record("a", 2)
    await _project(
        projector,
        keyword,
        MemoryChange("a", 2, (), "updated"),
        MemoryChange("b", 1, ("b1",), "stored"),
    )
    assert vector.upserted == [["a", "b"], ["a", "b"]]
    assert versions.get("a") == 2
    await keyword.close()


async def test_a_row_gone_is_removed_and_covers_its_events(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, _, keyword, versions = parts
    await projector.project_now({"gone": 1})
    assert vector.deleted == [["gone"]]
    assert versions.get("gone") == REMOVED_VERSION
    await _project(projector, keyword, MemoryChange("gone", 3, (), "deleted"))
    assert vector.deleted == [["gone"]]
    await keyword.close()


async def test_a_wait_asks_for_the_projection_and_is_released_by_it(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = _record("a", 1)
    ahead = ProjectionAhead(projector)
    service = IndexService(versions, vector, keyword, ahead=ahead)  # type: ignore[arg-type]
    assert await service.await_indexed("a", 1, 5_000) is True
    assert vector.upserted == [["a"]]
    # Without a projection ahead the same wait would need the event: it times out here.
    rows["b"] = _record("b", 1)
    plain = IndexService(versions, vector, keyword)  # type: ignore[arg-type]
    assert await plain.await_indexed("b", 1, 100) is False
    await ahead.close()
    await keyword.close()


async def test_a_memory_its_event_already_brought_is_not_written_again(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = _record("a", 1)
    await _project(projector, keyword, MemoryChange("a", 1, (), "stored"))
    await projector.project_now({"a": 1})
    assert vector.upserted == [["a"]]
    assert versions.get("a") == 1
    await keyword.close()


async def test_a_bulk_write_waits_for_its_events(
    rows: dict[str, MemoryRecord], parts: Parts
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = _record("a", 1)
    ahead = ProjectionAhead(projector)
    service = IndexService(versions, vector, keyword, ahead=ahead)  # type: ignore[arg-type]
    assert await service.await_indexed("a", 1, 100, by_event=True) is False
    assert vector.upserted == []
    await ahead.close()
    await keyword.close()
