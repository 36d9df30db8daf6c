"""The ``settings`` table, cached so a setting is not read on every store or search.

A change takes effect at once: the process that wrote the table calls ``changed``, which drops
its own values and announces the change to every other process, whose caches follow it
(``core.bus.settings_changes``). The TTL stays as the safety net for an announcement lost
while NATS was away.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from exocortex.core.db.pool import Pool
from exocortex.core.db.settings_store import load_settings


class SettingsCache:
    def __init__(self, pool: Pool, ttl_seconds: float = 5.0) -> None:
        self._pool = pool
        self._ttl = ttl_seconds
        self._values: dict[str, str] = {}
        self._loaded_at = float("-inf")
        # Moved by every invalidation: a read that began before one must not be kept as fresh
        # (it may have read the table before the change was committed).
        self._generation = 0
        self._announce: Callable[[], Awaitable[None]] | None = None

    def announce_with(self, announce: Callable[[], Awaitable[None]]) -> None:
        """How ``changed`` tells the other processes (set when the cache follows NATS)."""
        self._announce = announce

    def invalidate(self) -> None:
        """Read the table again on the next ``get``."""
        self._generation += 1
        self._loaded_at = float("-inf")

    async def changed(self) -> None:
        """This process wrote the table (committed): read it again here, and tell the others."""
        self.invalidate()
        if self._announce is not None:
            await self._announce()

    async def get(self) -> dict[str, str]:
        if time.monotonic() - self._loaded_at > self._ttl:
            generation = self._generation
            async with self._pool.connection() as conn:
                values = await load_settings(conn)
            self._values = values
            if generation == self._generation:
                self._loaded_at = time.monotonic()
        return self._values
