"""Reads of memories straight from Postgres (the source of truth)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.errors import InvalidArgument
from exocortex.core.repositories import memories

Row = dict[str, Any]
MAX_IDS = 100


class ReadService:
    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]) -> None:
        self._pool = pool

    async def get_memories(self, ids: list[str]) -> tuple[list[Row], list[str]]:
        """Rows in the order asked for, and the ids that do not exist."""
        if len(ids) > MAX_IDS:
            raise InvalidArgument(f"at most {MAX_IDS} ids per call", field="ids")
        async with self._pool.connection() as conn:
            rows = await memories.get_many(conn, ids)
        found = [rows[i] for i in dict.fromkeys(ids) if i in rows]
        missing = [i for i in dict.fromkeys(ids) if i not in rows]
        return found, missing
