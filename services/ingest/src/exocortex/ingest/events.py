"""The NATS side of ingest: content-free memory events, enqueued in the same transaction as the
change they describe, and the outbox relay that publishes them to JetStream.

The relay publishes committed events at least once, in order. Each outbox row is published with
its id as ``Nats-Msg-Id``, so a row re-sent after a crash between publish and mark is dropped by
JetStream's duplicate window. While NATS is down rows simply wait; nothing is lost because the
row was committed with the write it describes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import suppress

from google.protobuf.timestamp_pb2 import Timestamp
from nats.js import JetStreamContext

from exocortex.core.bus import subjects
from exocortex.core.db import outbox
from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.logging import current_correlation_id, get_logger
from exocortex.ingest import metrics
from exocortex.ingest.repository import outbox_notifications
from exocortex.ingest.store.model import Row
from exocortex.proto.v1 import events_pb2

log = get_logger(__name__)

SUBJECTS = {
    "stored": subjects.MEMORY_STORED,
    "updated": subjects.MEMORY_UPDATED,
    "archived": subjects.MEMORY_ARCHIVED,
    "restored": subjects.MEMORY_RESTORED,
    "deleted": subjects.MEMORY_DELETED,
    "enriched": subjects.MEMORY_ENRICHED,
}


def payload(
    memory_id: str, version: int, namespace: str, change: str, chunk_ids: Sequence[str] = ()
) -> bytes:
    now = Timestamp()
    now.GetCurrentTime()
    return events_pb2.MemoryChanged(
        memory_id=memory_id,
        version=version,
        namespace=namespace,
        change=change,
        occurred_at=now,
        chunk_ids=list(chunk_ids),
    ).SerializeToString()


def headers() -> dict[str, str]:
    cid = current_correlation_id()
    return {subjects.CORRELATION_HEADER: cid} if cid else {}


async def emit(conn: DictConnection, row: Row, change: str, chunk_ids: Sequence[str] = ()) -> None:
    """Enqueue the event for ``row`` at its current version (the caller's transaction)."""
    await outbox.enqueue(
        conn,
        SUBJECTS[change],
        payload(row["id"], int(row["version"]), row["namespace"], change, chunk_ids),
        headers(),
    )


class OutboxRelay:
    def __init__(
        self,
        pool: Pool,
        js: JetStreamContext,
        database_url: str,
        *,
        poll_seconds: float,
        batch: int,
    ) -> None:
        self._pool = pool
        self._js = js
        self._database_url = database_url
        self._poll = poll_seconds
        self._batch = batch
        self._wake = asyncio.Event()

    def notify(self) -> None:
        """Called after a local commit so the event goes out without waiting for a poll."""
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        listener = asyncio.create_task(self._listen(stop), name="outbox-listen")
        try:
            while not stop.is_set():
                # Cleared before the read: a commit the read misses wakes the next drain, and
                # a drain that took fewer rows than a batch left none behind, so it waits for
                # that wake (or the poll) instead of reading the empty outbox once more.
                self._wake.clear()
                try:
                    published = await self._drain_once()
                except Exception as exc:
                    log.warning("outbox relay could not publish; will retry", error=str(exc))
                    published = 0
                    await asyncio.sleep(self._poll)
                if published >= self._batch:
                    continue
                with suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self._poll)
        finally:
            listener.cancel()
            with suppress(asyncio.CancelledError):
                await listener

    async def _drain_once(self) -> int:
        async with self._pool.connection() as conn, conn.transaction():
            # Marked published in the transaction, which commits only once they are.
            rows = await outbox.claim_unpublished(conn, self._batch)
            if not rows:
                metrics.OUTBOX_BACKLOG.set(0)
                return 0
            acks = [
                self._js.publish(
                    row.subject,
                    row.payload,
                    headers={**row.headers, subjects.MSG_ID_HEADER: str(row.id)},
                    timeout=5.0,
                )
                for row in rows
            ]
            # Publish the batch concurrently; one failure fails the batch (rows stay unpublished
            # and are re-sent; JetStream drops the duplicates).
            await asyncio.gather(*acks)
        metrics.OUTBOX_PUBLISHED.inc(len(rows))
        if len(rows) < self._batch:
            # Fewer than asked for: nothing was left behind (one query less per drain).
            metrics.OUTBOX_BACKLOG.set(0)
        else:
            async with self._pool.connection() as conn:
                metrics.OUTBOX_BACKLOG.set(await outbox.backlog(conn))
        return len(rows)

    async def _listen(self, stop: asyncio.Event) -> None:
        """LISTEN for commits by any process (ingest, enrichment, maintenance)."""
        while not stop.is_set():
            try:
                async for _ in outbox_notifications(self._database_url):
                    self._wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("outbox listener lost its connection", error=str(exc))
                await asyncio.sleep(self._poll)
