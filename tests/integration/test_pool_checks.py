"""The pool checks a connection that sat idle before handing it out, so a connection Postgres
dropped meanwhile is replaced instead of failing the request that took it."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from exocortex.core.db import pool as pool_module
from exocortex.core.db.pool import open_pool


async def test_a_dropped_idle_connection_is_replaced(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "CHECK_AFTER_IDLE_SECONDS", 0.2)
    pool = await open_pool(database_url, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            pid = (await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        await asyncio.sleep(0.4)  # idle long enough to be checked
        async with pool.connection() as conn:
            row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
        assert row["pid"] != pid  # a fresh connection, and the query worked
    finally:
        await pool.close()
