"""The events a restore writes to the outbox: one ``stored`` event per restored root memory,
as ingest writes for a store, so the indexes and the enrichment worker see it the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.bus import subjects
from exocortex.proto.v1 import events_pb2


def stored_event(row: dict[str, Any]) -> tuple[str, bytes]:
    stamp = Timestamp()
    stamp.FromDatetime(datetime.now(UTC))
    event = events_pb2.MemoryChanged(
        memory_id=row["id"],
        version=row["version"],
        namespace=row["namespace"],
        change="stored",
        occurred_at=stamp,
        chunk_ids=list(row["chunk_ids"]),
    )
    return subjects.MEMORY_STORED, event.SerializeToString()
