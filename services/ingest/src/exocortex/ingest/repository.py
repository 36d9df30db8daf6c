"""The outbox's wake-up call: Postgres notifications on the channel every committed write
signals (from ingest, enrichment or maintenance), on a connection of their own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg

from exocortex.core.db.outbox import NOTIFY_CHANNEL


async def outbox_notifications(database_url: str) -> AsyncIterator[None]:
    """Yields once per notification until the connection fails (the error is raised)."""
    conn = await psycopg.AsyncConnection.connect(database_url, autocommit=True)
    async with conn:
        await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
        async for _ in conn.notifies():
            yield None
