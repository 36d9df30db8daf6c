"""Read-your-writes: callers wait until a memory version is visible to search.

Whichever replica is asked answers: the versions this process applied are marked here at once
(no round trip), versions another replica applied arrive as its announcements (see
``events.IndexedAnnouncements``), and the index itself, shared when the engines are servers,
is asked when the wait starts and every ``poll_seconds`` while it lasts, so an announcement
sent before this process listened, or lost while NATS was away, costs one poll, not the
deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable

# Projected version of one memory as an index holds it now (0 when it holds none).
StoredVersion = Callable[[str], Awaitable[int]]
# The same for many memories at once (those it holds none of may be left out).
StoredVersions = Callable[[list[str]], Awaitable[dict[str, int]]]

# How often a wait asks the index while no announcement came: bounds what a lost announcement
# costs; a version applied here or announced releases the wait at once.
POLL_SECONDS = 1.0


class IndexedVersions:
    """Highest version of each memory applied to both indexes, by this process or (announced)
    by another replica sharing the indexes.

    Only recent writes are waited on, so the map is bounded: older entries are dropped once it
    grows large (a wait for a dropped id falls back to reading the index's stored versions).
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self._versions: dict[str, int] = {}
        self._waiters: defaultdict[str, list[tuple[int, asyncio.Future[None]]]] = defaultdict(list)
        self._max = max_entries

    def get(self, memory_id: str) -> int | None:
        return self._versions.get(memory_id)

    def mark(self, memory_id: str, version: int) -> None:
        if version > self._versions.get(memory_id, 0):
            self._versions[memory_id] = version
        if len(self._versions) > self._max:
            for key in list(self._versions)[: self._max // 10]:
                del self._versions[key]
        waiting = self._waiters.get(memory_id)
        if not waiting:
            return
        remaining = []
        for wanted, future in waiting:
            if version >= wanted:
                if not future.done():
                    future.set_result(None)
            else:
                remaining.append((wanted, future))
        if remaining:
            self._waiters[memory_id] = remaining
        else:
            del self._waiters[memory_id]

    async def wait_all(
        self, memory_ids: list[str], version: int, within_seconds: float
    ) -> list[str]:
        """Wait until each of ``memory_ids`` reached ``version``, up to ``within_seconds`` in
        all: one timer for the lot. The ids still short of it."""
        left = [i for i in memory_ids if self._versions.get(i, 0) < version]
        if not left:
            return []
        loop = asyncio.get_running_loop()
        futures: dict[str, asyncio.Future[None]] = {}
        for memory_id in left:
            future: asyncio.Future[None] = loop.create_future()
            self._waiters[memory_id].append((version, future))
            futures[memory_id] = future
        try:
            await asyncio.wait(futures.values(), timeout=within_seconds)
        finally:
            for memory_id, future in futures.items():
                entries = self._waiters.get(memory_id)
                if entries is not None:
                    entries[:] = [(v, f) for v, f in entries if f is not future]
                    if not entries:
                        del self._waiters[memory_id]
        return [i for i, future in futures.items() if not future.done()]

    async def wait(self, memory_id: str, version: int, within_seconds: float) -> bool:
        if self._versions.get(memory_id, 0) >= version:
            return True
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters[memory_id].append((version, future))
        try:
            await asyncio.wait_for(future, within_seconds)
            return True
        except TimeoutError:
            return False
        finally:
            entries = self._waiters.get(memory_id)
            if entries is not None:
                entries[:] = [(v, f) for v, f in entries if f is not future]
                if not entries:
                    del self._waiters[memory_id]


async def wait_until_indexed(
    versions: IndexedVersions,
    stored: StoredVersion,
    memory_id: str,
    version: int,
    within_seconds: float,
    *,
    poll_seconds: float = POLL_SECONDS,
    ask_first: bool = True,
) -> bool:
    """Whether ``version`` of the memory is searchable, waiting up to ``within_seconds``.
    ``ask_first=False``: someone is about to mark it (a projection ahead of its event), so the
    index is not asked before the first slice of the wait."""
    known = versions.get(memory_id)
    if known is not None and known >= version:
        return True
    deadline = time.monotonic() + within_seconds
    # A memory this process has heard of will be announced again when it changes, so only an
    # unknown one needs the index asked before the wait (applied elsewhere before this
    # process listened, or before a restart); the last check runs at the deadline regardless.
    ask = known is None and ask_first
    while True:
        if ask:
            held = await stored(memory_id)
            if held >= version:
                versions.mark(memory_id, held)
                return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        slice_seconds = min(poll_seconds, remaining)
        if await versions.wait(memory_id, version, slice_seconds):
            return True
        ask = True


async def wait_until_all_indexed(
    versions: IndexedVersions,
    stored: StoredVersions,
    memory_ids: list[str],
    version: int,
    within_seconds: float,
    *,
    poll_seconds: float = POLL_SECONDS,
) -> bool:
    """``wait_until_indexed`` for many memories at one version (a bulk write's new ones):
    whether every one is searchable within ``within_seconds``. The index is asked once for all
    of them (at the start when any is unknown here, then once a poll), not once a memory."""
    deadline = time.monotonic() + within_seconds
    left = [i for i in dict.fromkeys(memory_ids) if (versions.get(i) or 0) < version]
    ask = any(versions.get(i) is None for i in left)
    while left:
        if ask:
            for memory_id, held in (await stored(left)).items():
                if held >= version:
                    versions.mark(memory_id, held)
            left = [i for i in left if (versions.get(i) or 0) < version]
            if not left:
                return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        left = await versions.wait_all(left, version, min(poll_seconds, remaining))
        ask = True
    return True
