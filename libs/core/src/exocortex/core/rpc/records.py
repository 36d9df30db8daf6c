"""Typed records → protobuf messages, for the servicers of every service that answers with a
memory (one conversion, so every RPC shows a memory the same way)."""

from __future__ import annotations

import json

from exocortex.core.records import MemoryRecord
from exocortex.core.rpc.timestamps import to_stamp
from exocortex.proto.v1 import common_pb2

_TIMES = ("created_at", "updated_at", "last_accessed_at", "expires_at")


def memory_to_proto(record: MemoryRecord) -> common_pb2.Memory:
    memory = common_pb2.Memory(
        id=record.id,
        namespace=record.namespace,
        content=record.content,
        content_type=record.content_type,
        source=record.source,
        importance=float(record.importance),
        valence=float(record.valence),
        is_active=bool(record.is_active),
        is_metadata=bool(record.is_metadata),
        tags=list(record.tags or []),
        keywords=record.keywords or "",
        access_count=int(record.access_count or 0),
        useful_count=int(record.useful_count or 0),
        metadata_json=json.dumps(record.metadata or {}, separators=(",", ":")),
        version=int(record.version),
        enrichment_status=record.enrichment_status or "pending",
        attribution=common_pb2.Attribution(**record.attribution.given()),
    )
    if record.source_uri is not None:
        memory.source_uri = record.source_uri
    if record.parent_id is not None:
        memory.parent_id = record.parent_id
    if record.superseded_by is not None:
        memory.superseded_by = record.superseded_by
    if record.archived_by is not None:
        memory.archived_by = record.archived_by
    if record.embedding_model is not None:
        memory.embedding_model = record.embedding_model
    if record.chunk_index is not None:
        memory.chunk_index = int(record.chunk_index)
    for name in _TIMES:
        stamp = to_stamp(getattr(record, name))
        if stamp is not None:
            getattr(memory, name).CopyFrom(stamp)
    return memory
