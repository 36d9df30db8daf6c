"""The namespace's highest access count, which normalises the frequency signal: it moves slowly,
so it is cached for a minute and refreshed beside the searches that find it stale."""

from __future__ import annotations

import asyncio

from exocortex.core.db.pool import Pool
from exocortex.core.logging import get_logger
from exocortex.retrieval.search import repository
from exocortex.retrieval.search.lru import TtlCache

log = get_logger(__name__)


class MaxAccess:
    def __init__(self, pool: Pool, ttl_seconds: float = 60.0) -> None:
        self._pool = pool
        # Keyed by namespace; None is every namespace.
        self._cache: TtlCache[str | None, int] = TtlCache(ttl_seconds=ttl_seconds)
        self._refreshing: set[str | None] = set()
        self._background: set[asyncio.Task[None]] = set()

    async def get(self, namespace: str | None) -> int:
        cached = self._cache.peek(namespace)
        if cached is None:
            return await self._read(namespace)
        value, fresh = cached
        if not fresh and namespace not in self._refreshing:
            # It reads every used memory (200-300 ms at 100k): a search answers with the
            # last value and the refresh runs beside it, instead of one search a minute
            # waiting for it.
            self._refreshing.add(namespace)
            task = asyncio.create_task(self._refresh(namespace))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return value

    async def _refresh(self, namespace: str | None) -> None:
        try:
            await self._read(namespace)
        except Exception as exc:
            log.warning("max access refresh failed; the last value stays", error=str(exc))
        finally:
            self._refreshing.discard(namespace)

    async def _read(self, namespace: str | None) -> int:
        async with self._pool.connection() as conn:
            value = await repository.max_access(conn, namespace)
        self._cache.put(namespace, value)
        return value
