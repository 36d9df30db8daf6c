"""Contract every KeywordIndex adapter meets, run against each real engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from exocortex.indexes.base import IndexFilter, KeywordIndex

from .conftest import DocFactory, days

ALL = IndexFilter()


async def ids(index: KeywordIndex, query: str, flt: IndexFilter = ALL) -> list[str]:
    return [h.memory_id for h in await index.search(query, 20, flt)]


async def test_bm25_match_and_stemming(keyword_index: KeywordIndex, make_doc: DocFactory) -> None:
    runs = make_doc(content="She runs every morning before work.")
    run = make_doc(content="A long run along the river.")
    cooking = make_doc(content="Cooking pasta with garlic and olive oil.")
    await keyword_index.upsert([runs, run, cooking])
    await keyword_index.flush()

    found = await ids(keyword_index, "running")

    assert set(found) == {runs.memory_id, run.memory_id}
    hits = await keyword_index.search("garlic pasta", 5, ALL)
    assert hits[0].memory_id == cooking.memory_id
    assert hits[0].score > 0


async def test_keywords_outrank_content(keyword_index: KeywordIndex, make_doc: DocFactory) -> None:
    in_content = make_doc(content="postgres migration notes", keywords="database schema")
    in_keywords = make_doc(content="database schema notes", keywords="postgres migration")
    await keyword_index.upsert([in_content, in_keywords])
    await keyword_index.flush()

    assert (await ids(keyword_index, "postgres"))[0] == in_keywords.memory_id


@pytest.mark.parametrize(
    "query",
    [
        '"foo(bar" AND: -x*',
        "content:foo",
        "[1 TO 2]",
        "a\\b",
        "~^!{}",
        "NOT OR AND",
        "'",
        "ünï code",
    ],
)
async def test_query_syntax_never_raises(
    keyword_index: KeywordIndex, make_doc: DocFactory, query: str
) -> None:
    doc = make_doc(content="foo bar baz")
    await keyword_index.upsert([doc])
    await keyword_index.flush()

    hits = await keyword_index.search(query, 5, ALL)

    if query.startswith('"foo'):
        assert [h.memory_id for h in hits] == [doc.memory_id]


@pytest.mark.parametrize("query", ["", "   ", "the", "the of and", "?!"])
async def test_empty_or_stopword_query_finds_nothing(
    keyword_index: KeywordIndex, make_doc: DocFactory, query: str
) -> None:
    await keyword_index.upsert([make_doc(content="the cat and the dog")])
    await keyword_index.flush()

    assert await keyword_index.search(query, 5, ALL) == []


async def test_filters(keyword_index: KeywordIndex, make_doc: DocFactory) -> None:
    target = make_doc(
        content="release checklist",
        namespace="work",
        tags=("alpha", "beta"),
        content_type="decision",
        source="mcp",
        created_at=days(10),
        importance=0.9,
    )
    other_ns = make_doc(content="release checklist", namespace="home")
    no_tag = make_doc(content="release checklist", namespace="work", tags=("gamma",))
    old = make_doc(content="release checklist", namespace="work", created_at=days(-10))
    meta = make_doc(content="release checklist", namespace="work", tags=("beta",), is_metadata=True)
    low = make_doc(content="release checklist", namespace="work", importance=0.1)
    docs = [target, other_ns, no_tag, old, meta, low]
    await keyword_index.upsert(docs)
    await keyword_index.flush()

    async def found(flt: IndexFilter) -> set[str]:
        return set(await ids(keyword_index, "release", flt))

    every = {d.memory_id for d in docs}
    assert await found(ALL) == every
    assert await found(IndexFilter(namespace="home")) == {other_ns.memory_id}
    assert other_ns.memory_id not in await found(IndexFilter(namespace="work"))
    assert await found(IndexFilter(namespaces_any=("home", "elsewhere"))) == {other_ns.memory_id}
    assert await found(IndexFilter(namespaces_any=("home", "work"))) == every
    assert await found(IndexFilter(tags_any=("beta", "zzz"))) == {target.memory_id, meta.memory_id}
    assert await found(IndexFilter(content_type="decision")) == {target.memory_id}
    assert await found(IndexFilter(source="mcp")) == {target.memory_id}
    assert await found(IndexFilter(created_after=days(1), created_before=days(11))) == {
        target.memory_id
    }
    assert target.memory_id not in await found(IndexFilter(created_before=days(10)))
    assert target.memory_id in await found(IndexFilter(created_after=days(10)))
    assert old.memory_id not in await found(IndexFilter(created_after=days(-1)))
    assert meta.memory_id not in await found(IndexFilter(exclude_metadata=True))
    assert await found(IndexFilter(min_importance=0.8)) == {target.memory_id}
    assert await found(IndexFilter(exclude_ids=(target.memory_id, low.memory_id))) == every - {
        target.memory_id,
        low.memory_id,
    }


async def test_filters_do_not_change_relevance_order(
    keyword_index: KeywordIndex, make_doc: DocFactory
) -> None:
    strong = make_doc(content="kafka kafka kafka consumer lag", namespace="n")
    weak = make_doc(content="a note that mentions kafka once among many other words", namespace="n")
    await keyword_index.upsert([weak, strong])
    await keyword_index.flush()

    assert await ids(keyword_index, "kafka", IndexFilter(namespace="n")) == [
        strong.memory_id,
        weak.memory_id,
    ]


async def test_chunk_hits_carry_parent_and_are_excluded_with_it(
    keyword_index: KeywordIndex, make_doc: DocFactory
) -> None:
    parent = make_doc(content="overview")
    chunk = make_doc(content="zeppelin airship history", parent_id=parent.memory_id)
    await keyword_index.upsert([parent, chunk])
    await keyword_index.flush()

    hits = await keyword_index.search("zeppelin", 5, ALL)
    assert [(h.memory_id, h.parent_id) for h in hits] == [(chunk.memory_id, parent.memory_id)]
    assert (
        await keyword_index.search("zeppelin", 5, IndexFilter(exclude_ids=(parent.memory_id,)))
        == []
    )


async def test_delete_reupsert_versions_count(
    keyword_index: KeywordIndex, make_doc: DocFactory
) -> None:
    a = make_doc(content="alpha memory", version=1)
    b = make_doc(content="beta memory", version=3)
    await keyword_index.upsert([a, b])
    await keyword_index.flush()
    assert await keyword_index.count() == 2

    await keyword_index.upsert([make_doc(memory_id=a.memory_id, version=2, content="gamma memory")])
    await keyword_index.delete([b.memory_id, "01ARZ3NDEKTSV4RRFFQ69G5FAV"])
    await keyword_index.flush()

    assert await keyword_index.count() == 1
    assert await ids(keyword_index, "memory") == [a.memory_id]
    assert await ids(keyword_index, "alpha") == []
    assert await ids(keyword_index, "gamma") == [a.memory_id]
    assert await keyword_index.versions([a.memory_id, b.memory_id, "nope"]) == {a.memory_id: 2}


async def test_held_lists_every_flushed_id_with_its_version_across_pages(
    keyword_index: KeywordIndex, make_doc: DocFactory
) -> None:
    assert await keyword_index.held() == {}
    # More than one page (2,000 documents) of listing.
    docs = [make_doc(content=f"entry {i}") for i in range(2_050)]
    await keyword_index.upsert(docs)
    await keyword_index.upsert([make_doc(memory_id=docs[0].memory_id, version=7, content="x")])
    await keyword_index.delete([docs[1].memory_id])
    await keyword_index.flush()
    expected = {d.memory_id: d.version for d in docs[2:]}
    expected[docs[0].memory_id] = 7
    assert await keyword_index.held() == expected

    # What a search sees: a write not yet flushed is not listed.
    late = make_doc(content="late")
    await keyword_index.upsert([late])
    if type(keyword_index).__name__ == "TantivyKeywordIndex":
        assert late.memory_id not in await keyword_index.held()
    elif type(keyword_index).__name__ == "SharedCommits":
        # It commits before listing: a search there would commit what it must see too.
        assert (await keyword_index.held())[late.memory_id] == 1
    await keyword_index.flush()
    assert (await keyword_index.held())[late.memory_id] == 1


async def test_tantivy_persists_across_reopen(tmp_path: Path, make_doc: DocFactory) -> None:
    from exocortex.indexes.tantivy_index import TantivyKeywordIndex

    doc = make_doc(content="persistent lighthouse keeper", version=5)
    index = TantivyKeywordIndex(tmp_path / "t")
    await index.upsert([doc])
    await index.flush()
    await index.close()

    reopened = TantivyKeywordIndex(tmp_path / "t")
    try:
        assert await reopened.count() == 1
        assert await ids(reopened, "lighthouses") == [doc.memory_id]
        assert await reopened.versions([doc.memory_id]) == {doc.memory_id: 5}
    finally:
        await reopened.close()


async def test_tantivy_unflushed_writes_survive_close(tmp_path: Path, make_doc: DocFactory) -> None:
    from exocortex.indexes.tantivy_index import TantivyKeywordIndex

    doc = make_doc(content="closing commits pending writes")
    index = TantivyKeywordIndex(tmp_path / "t")
    await index.upsert([doc])
    await index.close()

    reopened = TantivyKeywordIndex(tmp_path / "t")
    try:
        assert await ids(reopened, "pending") == [doc.memory_id]
    finally:
        await reopened.close()
