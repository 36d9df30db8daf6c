"""The only SQL of scheduled backups: an advisory lock, so one maintenance process writes a
scheduled backup when several run, and the number of them to keep (`backup.max_count`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

Pool = AsyncConnectionPool[psycopg.AsyncConnection[dict[str, Any]]]
_LOCK_KEY = "exocortex.backup.scheduled"
MAX_COUNT_KEY = "backup.max_count"
MAX_COUNT_DEFAULT = 7


async def max_count(pool: Pool) -> int:
    """Scheduled backups to keep, read at each scheduled backup so a change applies to the
    next one; a row that does not parse (checked when written) reads as the default."""
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT value FROM settings WHERE key = %s", (MAX_COUNT_KEY,))
        row = await cur.fetchone()
    try:
        return max(1, int(row["value"])) if row else MAX_COUNT_DEFAULT
    except ValueError:
        return MAX_COUNT_DEFAULT


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
