"""Background work waits for searches to pause, but never longer than max_wait.

No upper bounds on time here: only what the waiting guarantees whatever the machine's load."""

from __future__ import annotations

import asyncio

from exocortex.retrieval.search.priority import SearchActivity


async def test_no_wait_when_no_search_ran() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=30.0)
    assert activity.paused()
    await activity.wait_for_pause("test")  # returns at once (the test timeout catches a hang)


async def test_waits_for_the_running_search_and_the_quiet_spell_after_it() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=30.0)
    ended = asyncio.Event()

    async def one_search() -> None:
        with activity.searching():
            await asyncio.sleep(0.3)
        ended.set()

    search = asyncio.create_task(one_search())
    await asyncio.sleep(0)  # the search has started
    assert not activity.paused()
    await activity.wait_for_pause("test")
    assert ended.is_set()  # not before the search ended ...
    assert activity.paused()  # ... and the quiet spell after it ran out
    await search


async def test_a_search_that_never_ends_delays_background_work_by_max_wait_only() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=0.5)
    stop = asyncio.Event()

    async def endless_search() -> None:
        with activity.searching():
            await stop.wait()

    search = asyncio.create_task(endless_search())
    try:
        await asyncio.sleep(0)
        waited = await activity.wait_for_pause("test")
        assert waited >= 0.5 - 1e-6  # it gave up at max_wait, never before
        assert not activity.paused()
    finally:
        stop.set()
        await search
