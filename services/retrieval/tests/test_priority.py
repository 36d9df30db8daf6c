"""Background work waits for searches to pause, but never longer than max_wait."""

from __future__ import annotations

import asyncio

from exocortex.retrieval.priority import SearchActivity


async def test_no_wait_when_no_search_ran() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=5.0)
    assert await activity.wait_for_pause("test") < 0.05


async def test_waits_for_the_running_search_and_the_quiet_spell_after_it() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=5.0)

    async def one_search() -> None:
        with activity.searching():
            await asyncio.sleep(0.3)

    search = asyncio.create_task(one_search())
    await asyncio.sleep(0.05)
    waited = await activity.wait_for_pause("test")
    await search
    # The search ran for 0.25 s more, then 0.2 s of quiet had to pass.
    assert 0.4 <= waited < 1.5
    assert activity.paused()


async def test_a_steady_stream_of_searches_delays_background_work_by_max_wait_only() -> None:
    activity = SearchActivity(quiet=0.2, max_wait=0.5)
    stop = asyncio.Event()

    async def searches() -> None:
        while not stop.is_set():
            with activity.searching():
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.01)

    stream = asyncio.create_task(searches())
    try:
        await asyncio.sleep(0.05)
        waited = await activity.wait_for_pause("test")
        assert 0.5 <= waited < 1.2
        assert not activity.paused()
    finally:
        stop.set()
        await stream
