"""The ``settings`` table, cached briefly so a PATCH takes effect within seconds without a
query on every store."""

from __future__ import annotations

import time

from exocortex.core.db.pool import Pool
from exocortex.core.db.settings_store import load_settings


class SettingsCache:
    def __init__(self, pool: Pool, ttl_seconds: float = 5.0) -> None:
        self._pool = pool
        self._ttl = ttl_seconds
        self._values: dict[str, str] = {}
        self._loaded_at = 0.0

    def invalidate(self) -> None:
        """Read the table again on the next ``get`` (the process that wrote it knows at once)."""
        self._loaded_at = float("-inf")

    async def get(self) -> dict[str, str]:
        if time.monotonic() - self._loaded_at > self._ttl:
            async with self._pool.connection() as conn:
                self._values = await load_settings(conn)
            self._loaded_at = time.monotonic()
        return self._values
