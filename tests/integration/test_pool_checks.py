"""The pool checks a connection that sat idle before handing it out, so a connection Postgres
dropped meanwhile is replaced instead of failing the request that took it."""

from __future__ import annotations

from types import SimpleNamespace

import psycopg
import pytest

from exocortex.core.db import pool as pool_module
from exocortex.core.db.pool import open_pool


async def test_a_dropped_idle_connection_is_replaced(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The pool's clock, moved by the test: "idle" is then a fact, not a guessed sleep.
    now = [1000.0]
    monkeypatch.setattr(pool_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    pool = await open_pool(database_url, min_size=1, max_size=1)
    try:
        async with pool.connection() as conn:
            pid = (await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone())["pid"]
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        now[0] += pool_module.CHECK_AFTER_IDLE_SECONDS + 1  # idle long enough to be checked
        async with pool.connection() as conn:
            row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
        assert row["pid"] != pid  # a fresh connection, and the query worked
    finally:
        await pool.close()
