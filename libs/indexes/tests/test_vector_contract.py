"""Contract every VectorIndex adapter meets, run against each real engine."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from exocortex.indexes.base import IndexFilter, VectorIndex

from .conftest import BASE_TIME, DIM, DocFactory, days, unit_vectors

ALL = IndexFilter()


async def test_nearest_first_with_cosine_score(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(20)
    docs = [make_doc(vector=v) for v in vs]
    await vector_index.upsert(docs)
    await vector_index.flush()

    hits = await vector_index.search(vs[3], 5, ALL)

    assert hits[0].memory_id == docs[3].memory_id
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) == 5


async def test_filters_apply_inside_the_engine(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(8, seed=11)
    target = make_doc(
        vector=vs[0],
        namespace="work",
        tags=("alpha", "beta"),
        content_type="decision",
        source="mcp",
        created_at=days(10),
        importance=0.9,
    )
    others = {
        "other_ns": make_doc(vector=vs[1], namespace="home"),
        "no_tag": make_doc(vector=vs[2], namespace="work", tags=("gamma",)),
        "old": make_doc(vector=vs[3], namespace="work", tags=("alpha",), created_at=days(-10)),
        "meta": make_doc(vector=vs[4], namespace="work", tags=("beta",), is_metadata=True),
        "low": make_doc(vector=vs[5], namespace="work", tags=("alpha",), importance=0.1),
    }
    await vector_index.upsert([target, *others.values()])
    await vector_index.flush()

    async def ids(flt: IndexFilter) -> set[str]:
        return {h.memory_id for h in await vector_index.search(vs[0], 10, flt)}

    every = {target.memory_id, *(d.memory_id for d in others.values())}
    assert await ids(ALL) == every
    assert await ids(IndexFilter(namespace="home")) == {others["other_ns"].memory_id}
    assert others["other_ns"].memory_id not in await ids(IndexFilter(namespace="work"))
    assert await ids(IndexFilter(namespaces_any=("home", "elsewhere"))) == {
        others["other_ns"].memory_id
    }
    assert await ids(IndexFilter(namespaces_any=("home", "work"))) == every
    assert await ids(IndexFilter(namespace="work", tags_any=("beta", "zzz"))) == {
        target.memory_id,
        others["meta"].memory_id,
    }
    assert await ids(IndexFilter(content_type="decision")) == {target.memory_id}
    assert await ids(IndexFilter(source="mcp")) == {target.memory_id}
    assert await ids(IndexFilter(created_after=days(1), created_before=days(11))) == {
        target.memory_id
    }
    # created_before is exclusive, created_after inclusive.
    assert target.memory_id not in await ids(IndexFilter(created_before=days(10)))
    assert target.memory_id in await ids(IndexFilter(created_after=days(10)))
    assert others["old"].memory_id not in await ids(
        IndexFilter(created_after=BASE_TIME - timedelta(days=1))
    )
    assert others["meta"].memory_id not in await ids(IndexFilter(exclude_metadata=True))
    assert others["meta"].memory_id in await ids(IndexFilter(exclude_metadata=False))
    assert await ids(IndexFilter(min_importance=0.8)) == {target.memory_id}
    excluded = await ids(IndexFilter(exclude_ids=(target.memory_id, others["low"].memory_id)))
    assert excluded == every - {target.memory_id, others["low"].memory_id}


async def test_filter_keeps_limit_when_best_matches_are_filtered_out(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(60, seed=3)
    docs = [make_doc(vector=v, namespace="a" if i % 6 == 0 else "b") for i, v in enumerate(vs)]
    await vector_index.upsert(docs)
    await vector_index.flush()

    hits = await vector_index.search(vs[1], 5, IndexFilter(namespace="a"))

    assert len(hits) == 5
    assert {h.memory_id for h in hits} <= {d.memory_id for d in docs if d.namespace == "a"}


async def test_chunks_carry_parent_and_are_excluded_with_it(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(3, seed=5)
    parent = make_doc(vector=None)
    chunk = make_doc(vector=vs[0], parent_id=parent.memory_id)
    other = make_doc(vector=vs[1])
    await vector_index.upsert([parent, chunk, other])
    await vector_index.flush()

    hits = await vector_index.search(vs[0], 5, ALL)
    assert hits[0].memory_id == chunk.memory_id
    assert hits[0].parent_id == parent.memory_id
    assert await vector_index.count() == 2  # the parent has no vector, so it is not indexed

    hits = await vector_index.search(vs[0], 5, IndexFilter(exclude_ids=(parent.memory_id,)))
    assert [h.memory_id for h in hits] == [other.memory_id]


async def test_delete_and_upsert_without_vector_remove(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(3, seed=9)
    a, b, c = (make_doc(vector=v) for v in vs)
    await vector_index.upsert([a, b, c])
    await vector_index.flush()

    await vector_index.delete([a.memory_id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"])  # unknown id is fine
    await vector_index.upsert([make_doc(memory_id=b.memory_id, version=2, vector=None)])
    await vector_index.flush()

    assert await vector_index.count() == 1
    assert [h.memory_id for h in await vector_index.search(vs[0], 5, ALL)] == [c.memory_id]


async def test_reupsert_replaces_without_duplicates(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(2, seed=13)
    doc = make_doc(vector=vs[0], namespace="old")
    await vector_index.upsert([doc])
    await vector_index.upsert(
        [make_doc(memory_id=doc.memory_id, version=2, vector=vs[1], namespace="new")]
    )
    await vector_index.flush()

    assert await vector_index.count() == 1
    assert await vector_index.versions([doc.memory_id]) == {doc.memory_id: 2}
    assert await vector_index.search(vs[1], 5, IndexFilter(namespace="old")) == []
    hits = await vector_index.search(vs[1], 5, IndexFilter(namespace="new"))
    assert [h.memory_id for h in hits] == [doc.memory_id]
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)


async def test_versions_reports_present_ids_only(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    vs = unit_vectors(2, seed=17)
    a = make_doc(vector=vs[0], version=4)
    b = make_doc(vector=vs[1], version=9)
    await vector_index.upsert([a, b])
    await vector_index.flush()

    got = await vector_index.versions(
        [a.memory_id, b.memory_id, "not-a-ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]
    )

    assert got == {a.memory_id: 4, b.memory_id: 9}
    assert await vector_index.versions([]) == {}


async def test_held_lists_every_id_with_its_version_across_pages(
    vector_index: VectorIndex, make_doc: DocFactory
) -> None:
    # More than one page (2,000 points) of listing.
    vs = unit_vectors(2_050, seed=19)
    docs = [make_doc(vector=v) for v in vs]
    await vector_index.upsert(docs)
    await vector_index.upsert([make_doc(memory_id=docs[0].memory_id, version=7, vector=vs[0])])
    await vector_index.delete([docs[1].memory_id])
    await vector_index.flush()

    held = await vector_index.held()

    expected = {d.memory_id: d.version for d in docs[2:]}
    expected[docs[0].memory_id] = 7
    assert held == expected


async def test_held_is_empty_for_an_empty_index(vector_index: VectorIndex) -> None:
    assert await vector_index.held() == {}


async def test_edge_shard_persists_across_reopen(tmp_path: Path, make_doc: DocFactory) -> None:
    from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex

    vs = unit_vectors(4, seed=19)
    docs = [make_doc(vector=v, namespace="p") for v in vs]
    index = QdrantEdgeVectorIndex(tmp_path / "q", DIM)
    await index.upsert(docs)
    await index.flush()
    await index.close()

    reopened = QdrantEdgeVectorIndex(tmp_path / "q", DIM)
    try:
        assert await reopened.count() == 4
        hits = await reopened.search(vs[2], 1, IndexFilter(namespace="p"))
        assert hits[0].memory_id == docs[2].memory_id
        assert await reopened.versions([docs[0].memory_id]) == {docs[0].memory_id: 1}
    finally:
        await reopened.close()


async def test_edge_optimize_keeps_results(tmp_path: Path, make_doc: DocFactory) -> None:
    from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex

    vs = unit_vectors(300, seed=23)
    docs = [make_doc(vector=v, namespace=f"n{i % 3}") for i, v in enumerate(vs)]
    index = QdrantEdgeVectorIndex(tmp_path / "q", DIM, optimize_threshold=100)
    try:
        await index.upsert(docs)
        await index.flush()  # crosses the threshold, so the optimizer runs here
        await index.optimize()
        hits = await index.search(vs[4], 3, IndexFilter(namespace="n1"))
        assert hits[0].memory_id == docs[4].memory_id
        assert await index.count() == 300
    finally:
        await index.close()
