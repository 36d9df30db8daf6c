"""Read-your-writes waits: released at once by a version applied here or announced by another
replica, by the shared index when the wait starts or at a poll, and never by an older version."""

import asyncio
import time

import pytest

from exocortex.retrieval.projection.events import decode, encode, sent_by
from exocortex.retrieval.projection.waiters import (
    IndexedVersions,
    wait_until_all_indexed,
    wait_until_indexed,
)
from exocortex.testing.wait import until_async


async def test_wait_returns_when_version_is_marked() -> None:
    versions = IndexedVersions()
    waiter = asyncio.create_task(versions.wait("m1", 2, within_seconds=5))
    await asyncio.sleep(0)
    versions.mark("m1", 1)
    await asyncio.sleep(0)
    assert not waiter.done()
    versions.mark("m1", 2)
    assert await waiter is True


async def test_wait_times_out_and_cleans_up() -> None:
    versions = IndexedVersions()
    assert await versions.wait("m1", 1, within_seconds=0.01) is False
    versions.mark("m1", 1)
    assert await versions.wait("m1", 1, within_seconds=0.01) is True


def test_older_version_never_lowers_the_mark() -> None:
    versions = IndexedVersions()
    versions.mark("m1", 3)
    versions.mark("m1", 2)
    assert versions.get("m1") == 3


class Index:
    """The version the shared index holds for each memory, and how often it was asked."""

    def __init__(self) -> None:
        self.held: dict[str, int] = {}
        self.asked = 0

    async def stored(self, memory_id: str) -> int:
        self.asked += 1
        return self.held.get(memory_id, 0)

    async def stored_many(self, memory_ids: list[str]) -> dict[str, int]:
        self.asked += 1
        return {i: self.held[i] for i in memory_ids if i in self.held}


async def test_a_version_applied_here_answers_without_asking_the_index() -> None:
    versions, index = IndexedVersions(), Index()
    versions.mark("m1", 2)
    assert await wait_until_indexed(versions, index.stored, "m1", 2, 5.0) is True
    assert index.asked == 0


async def test_an_unknown_memory_already_in_the_index_answers_at_once() -> None:
    # Applied by another replica before this one listened: the index is the shared fact.
    versions, index = IndexedVersions(), Index()
    index.held["m1"] = 3
    assert await wait_until_indexed(versions, index.stored, "m1", 3, 5.0) is True
    assert index.asked == 1
    assert versions.get("m1") == 3  # remembered: the next wait for it needs no look


async def _asked(index: Index, times: int) -> None:
    """Yield to the waiter until it has looked at the index ``times`` times."""

    async def looked() -> bool:
        return index.asked >= times

    await until_async(looked, what=f"the waiter asked the index {times} times", interval=0.01)


async def test_an_announcement_releases_the_wait_before_the_next_poll() -> None:
    versions, index = IndexedVersions(), Index()
    waiter = asyncio.create_task(
        wait_until_indexed(versions, index.stored, "m1", 1, 30.0, poll_seconds=30.0)
    )
    await _asked(index, 1)  # the look at the start found nothing: it is waiting now
    assert not waiter.done()
    versions.mark("m1", 1)  # what IndexedAnnouncements does on a replica's message
    assert await asyncio.wait_for(waiter, 10) is True
    assert index.asked == 1  # released by the announcement: no poll, no deadline


async def test_a_lost_announcement_costs_one_poll_not_the_deadline() -> None:
    versions, index = IndexedVersions(), Index()
    versions.mark("m1", 1)  # known here, so no look at the start
    index.held["m1"] = 2  # another replica applied it; its announcement never came
    waiter = asyncio.create_task(
        wait_until_indexed(versions, index.stored, "m1", 2, 30.0, poll_seconds=0.1)
    )
    assert await asyncio.wait_for(waiter, 10) is True
    assert index.asked == 1  # found by the first poll, long before the deadline


async def test_a_version_never_applied_is_not_indexed_at_the_deadline() -> None:
    versions, index = IndexedVersions(), Index()
    start = time.monotonic()
    assert await wait_until_indexed(versions, index.stored, "m1", 1, 0.3, poll_seconds=0.1) is False
    assert time.monotonic() - start >= 0.3  # not given up before the deadline
    assert index.asked >= 3  # at the start, at each poll and at the deadline


async def test_an_older_version_in_the_index_does_not_satisfy_a_newer_wait() -> None:
    versions, index = IndexedVersions(), Index()
    index.held["m1"] = 1
    assert (
        await wait_until_indexed(versions, index.stored, "m1", 2, 0.2, poll_seconds=0.05) is False
    )


def test_announcements_round_trip_and_reject_other_messages() -> None:
    assert decode(encode("replica-a", {"m1": 2, "m2": 7})) == ("replica-a", {"m1": 2, "m2": 7})
    with pytest.raises(ValueError, match="not an indexed-versions announcement"):
        decode(b'{"origin": "x"}')
    with pytest.raises(ValueError, match="Expecting value"):
        decode(b"not json")


def test_a_replica_knows_its_own_announcements_by_their_first_bytes() -> None:
    mine = sent_by("replica-a")
    assert encode("replica-a", {"m1": 2}).startswith(mine)
    assert encode("replica-a", {}).startswith(mine)
    assert not encode("replica-ab", {"m1": 2}).startswith(mine)
    assert not encode("replica-b", {"m1": 2}).startswith(mine)


async def test_many_memories_wait_once_each_released_by_its_own_version() -> None:
    versions, index = IndexedVersions(), Index()
    index.held["a"] = 1  # applied before this process listened
    versions.mark("b", 1)
    waiter = asyncio.create_task(
        wait_until_all_indexed(versions, index.stored_many, ["a", "b", "c", "d", "c"], 1, 5.0)
    )

    async def waited_on() -> set[str]:
        return set(versions._waiters)

    await until_async(waited_on, what="c and d waited on", accept=lambda k: k == {"c", "d"})
    assert index.asked == 1  # one look-up for all the unknown ones, not one each
    versions.mark("c", 1)
    await asyncio.sleep(0)
    assert not waiter.done()
    versions.mark("d", 2)
    assert await waiter is True
    assert not versions._waiters  # nothing left behind


async def test_many_memories_time_out_together_and_a_poll_finds_what_the_index_holds() -> None:
    versions, index = IndexedVersions(), Index()
    assert await wait_until_all_indexed(versions, index.stored_many, ["a", "b"], 1, 0.05) is False
    assert not versions._waiters  # the timed-out wait left nothing behind
    # Announced nowhere, found in the index at a poll.
    waiter = asyncio.create_task(
        wait_until_all_indexed(versions, index.stored_many, ["a", "b"], 1, 60.0, poll_seconds=0.02)
    )

    async def waited_on() -> set[str]:
        return set(versions._waiters)

    await until_async(waited_on, what="a and b waited on", accept=lambda k: k == {"a", "b"})
    index.held.update(a=1, b=1)
    assert await waiter is True
    assert versions.get("a") == versions.get("b") == 1
