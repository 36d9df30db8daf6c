"""The only SQL of scheduled backups: an advisory lock, so one maintenance process writes a
scheduled backup when several run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

Pool = AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]
_LOCK_KEY = "exocortex.backup.scheduled"


class BackupLock:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    @asynccontextmanager
    async def held(self) -> AsyncIterator[bool]:
        """Yields whether this process holds the lock (it is released on exit)."""
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                "SELECT pg_try_advisory_lock(hashtext(%s)) AS mine", (_LOCK_KEY,)
            )
            row = await cur.fetchone()
            mine = bool(row and row["mine"])
            try:
                yield mine
            finally:
                if mine:
                    await conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (_LOCK_KEY,))
