"""Protobuf messages → REST shapes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.records import ATTRIBUTION_FIELDS as ATTRIBUTION_FIELDS
from exocortex.proto.v1 import common_pb2, retrieval_pb2

_OPTIONAL: tuple[
    Literal[
        "source_uri", "parent_id", "superseded_by", "embedding_model", "chunk_index", "archived_by"
    ],
    ...,
] = ("source_uri", "parent_id", "superseded_by", "embedding_model", "chunk_index", "archived_by")


def _time(message: Any, name: str) -> datetime | None:
    if not message.HasField(name):
        return None
    stamp: Timestamp = getattr(message, name)
    return stamp.ToDatetime(tzinfo=UTC)


def memory(m: common_pb2.Memory) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": m.id,
        "namespace": m.namespace,
        "content": m.content,
        "content_type": m.content_type,
        "source": m.source,
        "importance": m.importance,
        "valence": m.valence,
        "is_active": m.is_active,
        "is_metadata": m.is_metadata,
        "tags": list(m.tags),
        "keywords": m.keywords,
        "access_count": m.access_count,
        "useful_count": m.useful_count,
        "metadata": json.loads(m.metadata_json or "{}"),
        "enrichment_status": m.enrichment_status,
        "version": m.version,
        "created_at": _time(m, "created_at"),
        "updated_at": _time(m, "updated_at"),
        "last_accessed_at": _time(m, "last_accessed_at"),
        "expires_at": _time(m, "expires_at"),
    }
    for name in _OPTIONAL:
        out[name] = getattr(m, name) if m.HasField(name) else None
    for who in ATTRIBUTION_FIELDS:
        out[who] = getattr(m.attribution, who) if m.attribution.HasField(who) else None
    return out


def search_result(r: retrieval_pb2.SearchResult) -> dict[str, Any]:
    b = r.breakdown
    return {
        "memory": memory(r.memory),
        "score": r.score,
        "vector_score": b.vector,
        "fts_score": b.keyword,
        "score_breakdown": {
            "fused": b.fused,
            "vector_rank": b.vector_rank or None,
            "keyword_rank": b.keyword_rank or None,
            "metadata_penalty": b.metadata_penalty,
        },
    }


def compact_result(r: retrieval_pb2.SearchResult) -> dict[str, Any]:
    return {
        "id": r.memory.id,
        "preview": r.memory.content[:200],
        "score": r.score,
        "tags": list(r.memory.tags),
        "created_at": _time(r.memory, "created_at"),
    }
