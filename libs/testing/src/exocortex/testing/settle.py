"""Waiting for the stack's background work to finish before a test edits rows or indexes
behind its back (enrichment's own event reaches the projector after the memory reads as
enriched; applied late, it would undo or mask the test's change)."""

from __future__ import annotations

import asyncio

import nats
import psycopg

from exocortex.core.bus import subjects
from exocortex.core.runtime.stack import Stack


async def projector_drained(stack: Stack) -> bool:
    """Every event written so far is in the stream (the outbox has none left to publish) and
    was applied and acknowledged by the projector: none waiting, none in flight."""
    async with await psycopg.AsyncConnection.connect(stack.database_url, autocommit=True) as conn:
        row = await (
            await conn.execute("SELECT count(*) FROM outbox WHERE published_at IS NULL")
        ).fetchone()
    if row is None or row[0]:
        return False
    nc = await nats.connect(stack.nats_url)
    try:
        info = await nc.jetstream().consumer_info(subjects.STREAM, subjects.RETRIEVAL_PROJECTOR)
    finally:
        await nc.close()
    return bool(info.num_pending == 0 and info.num_ack_pending == 0)


async def wait_projector_drained(stack: Stack, seconds: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        if await projector_drained(stack):
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the projector did not drain within {seconds:.0f} s")
