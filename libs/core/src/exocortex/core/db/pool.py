"""The async connection pool every service uses to reach Postgres."""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from exocortex.core.logging import get_logger

_log = get_logger(__name__)

DictConnection = AsyncConnection[DictRow]
"""A connection whose rows are dicts keyed by column name."""

Pool = AsyncConnectionPool[DictConnection]


async def open_pool(
    dsn: str,
    *,
    min_size: int = 1,
    max_size: int = 10,
    connect_timeout: float = 30.0,
    name: str = "exocortex",
    autocommit: bool = False,
) -> Pool:
    """Open a pool of dict-row connections and wait until `min_size` of them are connected.

    While Postgres is unreachable this keeps trying, with a pause that grows to
    `MAX_OPEN_BACKOFF_SECONDS`, rather than fail: a service started while the database is away
    (restarted by its supervisor, or started before it) waits for it instead of exiting, and an
    exit would count towards the supervisor stopping the whole stack.

    Connections are health-checked when taken from the pool, so a restarted Postgres costs one
    failed check, not one failed request. Close it with `await pool.close()` (or `async with`).

    ``autocommit`` suits a pool that only runs single reads: each use of a connection is then
    one round trip, where a transaction adds a BEGIN before the first statement and a COMMIT
    when the connection goes back (`conn.transaction()` still groups statements when needed).

    `connect_timeout` bounds how long a request waits for a free connection.
    """
    pause = OPEN_BACKOFF_SECONDS
    while True:
        pool: Pool = AsyncConnectionPool(
            dsn,
            min_size=min_size,
            max_size=max_size,
            timeout=connect_timeout,
            name=name,
            open=False,
            connection_class=DictConnection,
            kwargs={"row_factory": dict_row, "autocommit": autocommit},
            check=_check_when_idle,
        )
        try:
            await pool.open(wait=True, timeout=min(connect_timeout, OPEN_ATTEMPT_SECONDS))
        except PoolTimeout:
            await pool.close()
        except BaseException:
            await pool.close()
            raise
        else:
            return pool
        _log.warning("waiting for Postgres", pool=name, retry_in=pause)
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_OPEN_BACKOFF_SECONDS)


# An attempt gives up this soon so that the next one, not the pool's own slower reconnect
# schedule, finds a server that came back.
OPEN_ATTEMPT_SECONDS = 5.0
OPEN_BACKOFF_SECONDS = 0.5
MAX_OPEN_BACKOFF_SECONDS = 5.0


# A connection used this recently is known to be alive; checking it again would add a round trip
# to every query of a busy service (a search takes the pool three or four times).
CHECK_AFTER_IDLE_SECONDS = 2.0
_last_used: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


@asynccontextmanager
async def reading(pool: Pool) -> AsyncIterator[DictConnection]:
    """A connection of a transactional pool for single-statement reads, in autocommit: each
    statement is one round trip, where the pool's connections add a BEGIN before it and a
    COMMIT when it goes back. (Switching is a flag on the client: no round trip.)"""
    async with pool.connection() as conn:
        await conn.set_autocommit(True)
        try:
            yield conn
        finally:
            if not conn.closed:
                await conn.set_autocommit(False)


async def _check_when_idle(conn: Any) -> None:
    """The pool's health check, run only for a connection that sat idle: after a Postgres
    restart the first use of each stale connection fails the check and is replaced, not the
    request that took it."""
    now = time.monotonic()
    last = _last_used.get(conn)
    if last is None or now - last > CHECK_AFTER_IDLE_SECONDS:
        await AsyncConnectionPool.check_connection(conn)
    _last_used[conn] = now


def to_sqlalchemy_url(dsn: str) -> str:
    """Turn a libpq DSN (postgresql://...) into the SQLAlchemy URL for the psycopg 3 driver.

    `postgres://` (Heroku style) is accepted too; a URL already naming a driver is returned as is.
    """
    parts = urlsplit(dsn)
    scheme = parts.scheme.lower()
    if scheme in ("postgresql", "postgres"):
        return urlunsplit(parts._replace(scheme="postgresql+psycopg"))
    if scheme.startswith("postgresql+"):
        return dsn
    raise ValueError(f"not a PostgreSQL URL (expected postgresql://...): {dsn!r}")
