import asyncio

from exocortex.retrieval.projection.waiters import IndexedVersions


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
