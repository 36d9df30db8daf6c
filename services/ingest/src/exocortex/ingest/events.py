"""Content-free memory events, enqueued in the same transaction as the change they describe."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.bus import subjects
from exocortex.core.db import outbox
from exocortex.core.db.pool import DictConnection
from exocortex.core.logging import current_correlation_id
from exocortex.proto.v1 import events_pb2

Row = dict[str, Any]

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
