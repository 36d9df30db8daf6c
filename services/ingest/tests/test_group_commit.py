"""The group committer: stores that queue up behind a commit in flight commit together; a
store that arrives alone commits at once; a failed group is retried store by store, so each
store gets its own outcome."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest.store import group
from exocortex.ingest.store.repository import UniqueClash


def _rows(i: int) -> list[NewMemory]:
    return [
        NewMemory(
            id=f"m{i}",
            namespace="ns",
            content=f"text {i}",
            content_type="note",
            source="api",
            importance=0.5,
            valence=0.0,
            content_hash=f"h{i}",
        )
    ]


@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The groups committed (ids), through a fake commit that takes a moment; a group holding
    ``clash`` fails as a unique violation would."""
    seen: list[list[str]] = []

    async def fake_commit(
        _pool: Any, waiting: Sequence[Any], *, wake_relay: bool
    ) -> list[dict[str, Any]]:
        ids = [w.rows[0].id for w in waiting]
        seen.append(ids if wake_relay else [*ids, "(no pg_notify)"])
        await asyncio.sleep(0.01)
        if "clash" in ids:
            raise UniqueClash("uq_memories_active_root_hash")
        return [{"id": i, "version": 1} for i in ids]

    monkeypatch.setattr(group, "_commit", fake_commit)
    return seen


async def test_a_store_alone_commits_at_once(commits: list[list[str]]) -> None:
    committer = group.GroupCommitter(pool=None)  # type: ignore[arg-type]
    row = await committer.insert(_rows(1))
    assert row["id"] == "m1"
    assert commits == [["m1"]]


async def test_stores_arriving_during_a_commit_share_the_next(commits: list[list[str]]) -> None:
    committer = group.GroupCommitter(pool=None)  # type: ignore[arg-type]
    first = asyncio.create_task(committer.insert(_rows(0)))
    await asyncio.sleep(0)  # the first commit is in flight
    rest = [asyncio.create_task(committer.insert(_rows(i))) for i in range(1, 10)]
    rows = await asyncio.gather(first, *rest)
    assert [r["id"] for r in rows] == [f"m{i}" for i in range(10)]
    assert commits == [["m0"], [f"m{i}" for i in range(1, 10)]]


async def test_groups_are_bounded(commits: list[list[str]]) -> None:
    committer = group.GroupCommitter(pool=None, max_group=4)  # type: ignore[arg-type]
    await asyncio.gather(*(committer.insert(_rows(i)) for i in range(10)))
    assert [len(g) for g in commits] == [4, 4, 2]


async def test_a_failed_group_is_retried_store_by_store(commits: list[list[str]]) -> None:
    committer = group.GroupCommitter(pool=None)  # type: ignore[arg-type]
    first = asyncio.create_task(committer.insert(_rows(0)))
    await asyncio.sleep(0)
    clash_rows = _rows(0)
    clash_rows[0].id = "clash"
    tasks = [
        asyncio.create_task(committer.insert(_rows(1))),
        asyncio.create_task(committer.insert(clash_rows)),
        asyncio.create_task(committer.insert(_rows(2))),
    ]
    await first
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert results[0] == {"id": "m1", "version": 1}
    assert isinstance(results[1], UniqueClash)
    assert results[2] == {"id": "m2", "version": 1}
    # The group, then each of its stores on its own.
    assert commits[1:] == [["m1", "clash", "m2"], ["m1"], ["clash"], ["m2"]]


async def test_a_local_wake_up_replaces_the_notification_and_comes_once_a_commit(
    commits: list[list[str]],
) -> None:
    woken: list[int] = []
    committer = group.GroupCommitter(
        pool=None,  # type: ignore[arg-type]
        on_commit=lambda: woken.append(len(commits)),
    )
    first = asyncio.create_task(committer.insert(_rows(0)))
    await asyncio.sleep(0)  # the first commit is in flight
    await asyncio.gather(first, *(committer.insert(_rows(i)) for i in (1, 2)))
    assert commits == [["m0", "(no pg_notify)"], ["m1", "m2", "(no pg_notify)"]]
    assert woken == [1, 2]  # after each commit, never before it
