"""Shared keyword commits (the embedded engine as the retrieval service runs it): a shown write
is seen by the next read, other writes wait for a commit, and a commit covers every write
applied before it started. On the real engine; nothing here depends on timing but the delay
being long against the test (60 s) or short (0.05 s)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from exocortex.indexes.base import IndexFilter
from exocortex.indexes.shared_commits import SharedCommits
from exocortex.indexes.tantivy_index import TantivyKeywordIndex

from .conftest import DocFactory

ALL = IndexFilter()


async def _found(index: SharedCommits, query: str) -> set[str]:
    return {h.memory_id for h in await index.search(query, 10, ALL)}


async def test_a_shown_write_is_found_by_the_next_search_without_a_flush(
    tmp_path: Path, make_doc: DocFactory
) -> None:
    index = SharedCommits(TantivyKeywordIndex(tmp_path / "kw"), delay=60.0)
    try:
        doc = make_doc(content="quarterly planning notes")
        await index.upsert([doc])
        index.show()
        assert await _found(index, "quarterly") == {doc.memory_id}
        # The search committed it, so whoever waits on the commit is released too.
        await asyncio.wait_for(index.committed(), 5)
    finally:
        await index.close()


async def test_a_write_not_shown_waits_for_the_commit(tmp_path: Path, make_doc: DocFactory) -> None:
    index = SharedCommits(TantivyKeywordIndex(tmp_path / "kw"), delay=60.0)
    try:
        shown = make_doc(content="alpha release")
        await index.upsert([shown])
        index.show()
        assert await _found(index, "release") == {shown.memory_id}
        later = make_doc(content="beta release")
        await index.upsert([later])  # e.g. enrichment's keywords: not shown
        assert await _found(index, "release") == {shown.memory_id}
        await index.flush()
        assert await _found(index, "release") == {shown.memory_id, later.memory_id}
    finally:
        await index.close()


async def test_waiters_are_released_by_the_delay_and_reads_count_everything(
    tmp_path: Path, make_doc: DocFactory
) -> None:
    index = SharedCommits(TantivyKeywordIndex(tmp_path / "kw"), delay=0.05)
    try:
        docs = [make_doc(content=f"note number {i}") for i in range(3)]
        for doc in docs:
            await index.upsert([doc])
        # Three batches, one commit after the delay; nobody read meanwhile.
        await asyncio.wait_for(asyncio.gather(*(index.committed() for _ in docs)), 5)
        assert await index.count() == 3
        # versions and held see every applied write, shown or not.
        extra = make_doc(content="unshown")
        await index.upsert([extra])
        assert (await index.versions([extra.memory_id])) == {extra.memory_id: 1}
        await index.delete([docs[0].memory_id])
        held = await index.held()
        assert docs[0].memory_id not in held
        assert extra.memory_id in held
    finally:
        await index.close()


async def test_writes_left_at_close_are_committed(tmp_path: Path, make_doc: DocFactory) -> None:
    index = SharedCommits(TantivyKeywordIndex(tmp_path / "kw"), delay=60.0)
    doc = make_doc(content="kept across a restart")
    await index.upsert([doc])
    waiting = asyncio.create_task(index.committed())
    await index.close()
    await asyncio.wait_for(waiting, 5)
    reopened = TantivyKeywordIndex(tmp_path / "kw")
    try:
        assert await reopened.versions([doc.memory_id]) == {doc.memory_id: 1}
    finally:
        await reopened.close()
