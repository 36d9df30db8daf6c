"""The only SQL of scheduled backups: an advisory lock, so one maintenance process writes a
scheduled backup when several run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.db.arrays import TextArray

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


async def embeddings(pool: Pool, ids: list[str]) -> dict[str, tuple[str, bytes]]:
    """Each memory's embedding with the fingerprint of the model that made it (rows without one
    are left out)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id, embedding_model, embedding FROM memories"
            " WHERE id = ANY(%s) AND embedding IS NOT NULL AND embedding_model IS NOT NULL",
            (TextArray(ids),),
        )
        return {
            r["id"]: (r["embedding_model"], bytes(r["embedding"])) for r in await cur.fetchall()
        }
