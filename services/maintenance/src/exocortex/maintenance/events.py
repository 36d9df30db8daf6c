"""The NATS side of the jobs' writes: a content-free `MemoryChanged` event per memory a job
archived or changed, enqueued in the outbox in the job's own transaction, so the projections
(vector and keyword indexes) follow exactly when the change commits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.bus import subjects
from exocortex.core.db import outbox
from exocortex.core.logging import current_correlation_id
from exocortex.proto.v1 import events_pb2

_SUBJECTS = {
    "updated": subjects.MEMORY_UPDATED,
    "archived": subjects.MEMORY_ARCHIVED,
    "deleted": subjects.MEMORY_DELETED,
}


@dataclass(frozen=True, slots=True)
class Changed:
    """A memory at the version the change left it."""

    memory_id: str
    version: int
    namespace: str


async def emit(
    conn: psycopg.AsyncConnection[Any],
    changed: Iterable[Changed],
    change: str,
    chunk_ids: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """One `memory.<change>` event per memory (``change``: updated | archived | deleted; a
    deleted memory's event names its chunks, which went with it)."""
    subject = _SUBJECTS[change]
    cid = current_correlation_id()
    headers = {subjects.CORRELATION_HEADER: cid} if cid else {}
    for item in changed:
        now = Timestamp()
        now.GetCurrentTime()
        payload = events_pb2.MemoryChanged(
            memory_id=item.memory_id,
            version=item.version,
            namespace=item.namespace,
            change=change,
            occurred_at=now,
            chunk_ids=list((chunk_ids or {}).get(item.memory_id, ())),
        ).SerializeToString()
        await outbox.enqueue(conn, subject, payload, headers)
