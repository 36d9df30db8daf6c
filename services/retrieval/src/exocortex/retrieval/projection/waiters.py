"""Read-your-writes: callers wait until a memory version is visible to search."""

from __future__ import annotations

import asyncio
from collections import defaultdict


class IndexedVersions:
    """Highest version of each memory applied to both indexes by this process.

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
