"""Projection ahead of the event: a memory projected from its row at once is searchable and its
waiters are released without its event; the event that comes later at the same version writes
nothing again and is acked only once a keyword commit holds the write. A newer event, one with
chunks, and a memory not projected ahead are projected as usual."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from exocortex.core.records import MemoryRecord
from exocortex.indexes.shared_commits import SharedCommits
from exocortex.retrieval.projection.ahead import ProjectionAhead
from exocortex.retrieval.projection.projector import REMOVED_VERSION, MemoryChange, Projector
from exocortex.retrieval.projection.service import IndexService
from exocortex.retrieval.projection.waiters import IndexedVersions


async def _project(projector: Projector, keyword: SharedCommits, *events: MemoryChange) -> None:
    """Project ``events``, committing (as a search would) until the batch is acked."""
    batch = asyncio.create_task(projector.project(list(events)))
    while not batch.done():
        await keyword.flush()
        await asyncio.sleep(0.01)
    await batch


Parts = tuple[Projector, Any, Any, SharedCommits, IndexedVersions]


@pytest.fixture
async def parts(index: Callable[[], Any]) -> Parts:
    vector, inner = index(), index()
    keyword = SharedCommits(inner, delay=60)
    versions = IndexedVersions()
    projector = Projector(None, vector, keyword, versions)  # type: ignore[arg-type]
    return projector, vector, inner, keyword, versions


async def test_a_memory_projected_ahead_is_released_and_its_event_writes_nothing(
    rows: dict[str, MemoryRecord], parts: Parts, record: Callable[..., MemoryRecord]
) -> None:
    projector, vector, inner, keyword, versions = parts
    rows["a"] = record("a", 1)
    await projector.project_now({"a": 1})
    assert vector.upserted == [["a"]]
    assert inner.upserted == [["a"]]
    assert versions.get("a") == 1
    assert inner.flushes == 0  # shown, not committed: the next search commits it

    event = asyncio.create_task(projector.project([MemoryChange("a", 1, (), "stored")]))
    for _ in range(20):  # every step it can take without a commit (no I/O here: yields suffice)
        await asyncio.sleep(0)
    assert not event.done(), "the event was acked before a commit held the write"
    await keyword.flush()
    await event
    assert vector.upserted == [["a"]]
    assert inner.upserted == [["a"]]
    await keyword.close()


async def test_a_newer_event_and_one_with_chunks_are_projected_as_usual(
    rows: dict[str, MemoryRecord], parts: Parts, record: Callable[..., MemoryRecord]
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = record("a", 1)
    rows["b"] = record("b", 1)
    await projector.project_now({"a": 1, "b": 1})
    rows["a"] = record("a", 2)
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
    rows: dict[str, MemoryRecord], parts: Parts, record: Callable[..., MemoryRecord]
) -> None:
    projector, vector, _, keyword, versions = parts
    await projector.project_now({"gone": 1})
    assert vector.deleted == [["gone"]]
    assert versions.get("gone") == REMOVED_VERSION
    await _project(projector, keyword, MemoryChange("gone", 3, (), "deleted"))
    assert vector.deleted == [["gone"]]
    await keyword.close()


@pytest.fixture
async def waits(parts: Parts) -> AsyncIterator[tuple[IndexService, IndexService]]:
    """The waits of a retrieval that projects ahead, and of one that does not."""
    projector, vector, _, keyword, versions = parts
    ahead = ProjectionAhead(projector)
    yield (
        IndexService(versions, vector, keyword, ahead=ahead),
        IndexService(versions, vector, keyword),
    )
    await ahead.close()
    await keyword.close()


async def test_a_wait_asks_for_the_projection_and_is_released_by_it(
    rows: dict[str, MemoryRecord],
    parts: Parts,
    record: Callable[..., MemoryRecord],
    waits: tuple[IndexService, IndexService],
) -> None:
    vector = parts[1]
    service, plain = waits
    rows["a"] = record("a", 1)
    assert await service.await_indexed("a", 1, 5_000) is True
    assert vector.upserted == [["a"]]
    # Without a projection ahead the same wait would need the event: it times out here.
    rows["b"] = record("b", 1)
    assert await plain.await_indexed("b", 1, 100) is False
    # A bulk write's waits wait for their events too.
    rows["c"] = record("c", 1)
    assert await service.await_indexed("c", 1, 100, by_event=True) is False
    assert vector.upserted == [["a"]]


async def test_a_memory_its_event_already_brought_is_not_written_again(
    rows: dict[str, MemoryRecord], parts: Parts, record: Callable[..., MemoryRecord]
) -> None:
    projector, vector, _, keyword, versions = parts
    rows["a"] = record("a", 1)
    await _project(projector, keyword, MemoryChange("a", 1, (), "stored"))
    await projector.project_now({"a": 1})
    assert vector.upserted == [["a"]]
    assert versions.get("a") == 1
    await keyword.close()


def _projected(path: str) -> float:
    return REGISTRY.get_sample_value("exo_retrieval_projected_total", {"path": path}) or 0.0


async def test_each_path_is_counted(
    rows: dict[str, MemoryRecord], parts: Parts, record: Callable[..., MemoryRecord]
) -> None:
    projector, _, _, keyword, _ = parts
    before = {p: _projected(p) for p in ("ahead", "event", "covered")}
    rows["a"] = record("a", 1)
    rows["b"] = record("b", 1)
    await projector.project_now({"a": 1})
    await _project(projector, keyword, MemoryChange("a", 1), MemoryChange("b", 1))
    assert {p: _projected(p) - before[p] for p in before} == {
        "ahead": 1,
        "event": 1,
        "covered": 1,
    }
    await keyword.close()
