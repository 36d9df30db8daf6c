"""The async connection pool every service uses to reach Postgres."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

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
) -> Pool:
    """Open a pool of dict-row connections and wait until `min_size` of them are connected.

    Connections are health-checked when taken from the pool, so a restarted Postgres costs one
    failed check, not one failed request. Close it with `await pool.close()` (or `async with`).

    Raises:
        psycopg_pool.PoolTimeout: Postgres was not reachable within `connect_timeout` seconds.
    """
    pool: Pool = AsyncConnectionPool(
        dsn,
        min_size=min_size,
        max_size=max_size,
        timeout=connect_timeout,
        name=name,
        open=False,
        connection_class=DictConnection,
        kwargs={"row_factory": dict_row},
        check=AsyncConnectionPool.check_connection,
    )
    try:
        await pool.open(wait=True, timeout=connect_timeout)
    except BaseException:
        await pool.close()
        raise
    return pool


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
