"""The embedded engines leave out a filter condition every indexed document meets (one namespace
for the whole index, no metadata memories): the answers must stay exactly those of the filtered
query, through writes that break the shortcut and searches that race them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from exocortex.indexes.base import IndexFilter
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.indexes.tantivy_index import TantivyKeywordIndex

from .conftest import DIM, DocFactory, unit_vectors

IN_WORK = IndexFilter(namespace="work", exclude_metadata=True)


@pytest.fixture
async def tantivy(tmp_path: Path) -> AsyncIterator[TantivyKeywordIndex]:
    index = TantivyKeywordIndex(tmp_path / "tantivy")
    yield index
    await index.close()


@pytest.fixture
async def edge(tmp_path: Path) -> AsyncIterator[QdrantEdgeVectorIndex]:
    index = QdrantEdgeVectorIndex(tmp_path / "qdrant", DIM)
    yield index
    await index.close()


def _tantivy_filters(index: TantivyKeywordIndex, flt: IndexFilter) -> int:
    return len(index._filter_clauses(flt, index._snapshot))


async def _words(index: TantivyKeywordIndex, query: str, flt: IndexFilter) -> set[str]:
    return {h.memory_id for h in await index.search(query, 10, flt)}


async def test_tantivy_leaves_out_what_every_document_meets(
    tantivy: TantivyKeywordIndex, make_doc: DocFactory
) -> None:
    work = [make_doc(namespace="work", content=f"lighthouse keeper log {i}") for i in range(5)]
    await tantivy.upsert(work)
    await tantivy.flush()

    assert _tantivy_filters(tantivy, IN_WORK) == 0
    assert await _words(tantivy, "lighthouse", IN_WORK) == {d.memory_id for d in work}
    # Another namespace's filter still applies: it matches none of these documents.
    assert _tantivy_filters(tantivy, IndexFilter(namespace="home")) == 1
    assert await _words(tantivy, "lighthouse", IndexFilter(namespace="home")) == set()

    home = make_doc(namespace="home", content="lighthouse at home")
    meta = make_doc(namespace="work", content="lighthouse metadata", is_metadata=True)
    await tantivy.upsert([home, meta])
    await tantivy.flush()

    assert _tantivy_filters(tantivy, IN_WORK) == 2
    assert await _words(tantivy, "lighthouse", IN_WORK) == {d.memory_id for d in work}
    assert await _words(tantivy, "lighthouse", IndexFilter(namespace="home")) == {home.memory_id}

    # Once the other namespace and the metadata are gone, the shortcut is back.
    await tantivy.delete([home.memory_id, meta.memory_id])
    await tantivy.flush()
    assert _tantivy_filters(tantivy, IN_WORK) == 0
    assert await _words(tantivy, "lighthouse", IN_WORK) == {d.memory_id for d in work}


async def test_tantivy_counts_per_snapshot(
    tantivy: TantivyKeywordIndex, make_doc: DocFactory
) -> None:
    """A search answers from the snapshot it started on, with that snapshot's counts: writes
    flushed meanwhile never make it skip a filter the newer documents need."""
    await tantivy.upsert([make_doc(namespace="work", content="harbour crane")])
    await tantivy.flush()
    before = tantivy._snapshot
    assert len(tantivy._filter_clauses(IN_WORK, before)) == 0

    await tantivy.upsert([make_doc(namespace="home", content="harbour crane at home")])
    await tantivy.flush()

    assert tantivy._snapshot is not before
    assert len(tantivy._filter_clauses(IN_WORK, tantivy._snapshot)) == 1
    # The flush counted the terms searches used ahead of them.
    assert ("namespace", "work") in tantivy._snapshot.counts


async def _nearest(index: QdrantEdgeVectorIndex, vector: object, flt: IndexFilter) -> list[str]:
    return [h.memory_id for h in await index.search(vector, 10, flt)]  # type: ignore[arg-type]


async def test_edge_leaves_out_what_every_point_meets(
    edge: QdrantEdgeVectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(8, seed=3)
    work = [make_doc(namespace="work", vector=v) for v in vs[:5]]
    await edge.upsert(work)
    await edge.flush()
    await edge.optimize()
    assert (edge._sole_namespace, edge._metadata_free) == ("work", True)
    assert set(await _nearest(edge, vs[0], IN_WORK)) == {d.memory_id for d in work}

    # The nearest points to the query arrive in another namespace and as metadata: the
    # shortcut is dropped before they land, and they are never answered.
    home = make_doc(namespace="home", vector=vs[0])
    meta = make_doc(namespace="work", vector=vs[0], is_metadata=True)
    await edge.upsert([home, meta])
    assert (edge._sole_namespace, edge._metadata_free) == (None, False)
    found = await _nearest(edge, vs[0], IN_WORK)
    assert found[0] == work[0].memory_id
    assert set(found) == {d.memory_id for d in work}
    assert await _nearest(edge, vs[0], IndexFilter(namespace="home")) == [home.memory_id]

    # Once searches pause, exact counts are taken again: two namespaces now.
    edge._last_search = 0.0
    await edge.optimize_when_idle()
    assert (edge._sole_namespace, edge._metadata_free) == (None, False)
    assert set(await _nearest(edge, vs[0], IN_WORK)) == {d.memory_id for d in work}


async def test_edge_checks_hits_when_a_write_races_the_search(
    edge: QdrantEdgeVectorIndex, make_doc: DocFactory
) -> None:
    """A search that read the shortcut just before a write dropped it still answers only
    what the filter allows."""
    vs = unit_vectors(4, seed=5)
    work = make_doc(namespace="work", vector=vs[1])
    home = make_doc(namespace="home", vector=vs[0])
    meta = make_doc(namespace="work", vector=vs[0], is_metadata=True)
    await edge.upsert([work, home, meta])
    await edge.flush()
    edge._sole_namespace, edge._metadata_free = "work", True  # as read before the write

    assert await _nearest(edge, vs[0], IN_WORK) == [work.memory_id]


async def test_edge_learns_the_shortcut_at_open(tmp_path: Path, make_doc: DocFactory) -> None:
    vs = unit_vectors(3, seed=9)
    first = QdrantEdgeVectorIndex(tmp_path / "q", DIM)
    await first.upsert([make_doc(namespace="work", vector=v) for v in vs])
    await first.close()

    reopened = QdrantEdgeVectorIndex(tmp_path / "q", DIM)
    try:
        assert (reopened._sole_namespace, reopened._metadata_free) == ("work", True)
        assert len(await _nearest(reopened, vs[0], IN_WORK)) == 3
        assert await _nearest(reopened, vs[0], IndexFilter(namespace="home")) == []
    finally:
        await reopened.close()
