"""The projector and an ``enriched`` event: the enrichment changed keywords only, so the vector
point is not rewritten (a rewrite takes it out of the HNSW graph); the keyword index gets the
new version, and the waiters are released at it. Any other event in the same batch for the
memory means a full write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from exocortex.core.records import MemoryRecord
from exocortex.retrieval.projection import repository
from exocortex.retrieval.projection.projector import MemoryChange, Projector
from exocortex.retrieval.projection.waiters import IndexedVersions


async def test_an_enriched_event_leaves_the_vector_alone(
    rows: dict[str, MemoryRecord], record: Callable[..., MemoryRecord], index: Callable[[], Any]
) -> None:
    rows["a"] = record("a", 2)
    rows["c"] = record("c", 1, parent_id="b")  # a chunk of b
    rows["b"] = record("b", 2)
    vector, keyword, versions = index(), index(), IndexedVersions()
    projector = Projector(None, vector, keyword, versions)  # type: ignore[arg-type]
    await projector.project(
        [MemoryChange("a", 2, (), "enriched"), MemoryChange("b", 2, (), "enriched")]
    )
    assert vector.upserted == []
    assert keyword.upserted == [["a", "b"]]
    assert keyword.flushes == 1
    assert versions.get("a") == 2
    assert versions.get("b") == 2


async def test_any_other_event_in_the_batch_writes_both(
    rows: dict[str, MemoryRecord], record: Callable[..., MemoryRecord], index: Callable[[], Any]
) -> None:
    rows["a"] = record("a", 2)
    vector, keyword = index(), index()
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
