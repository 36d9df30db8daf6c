"""Domain results → protobuf messages, for the servicers (the only side that speaks protobuf)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from google.protobuf import struct_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.records import EntityRecord, MemoryRecord
from exocortex.core.rpc.records import memory_to_proto
from exocortex.proto.v1 import common_pb2, retrieval_pb2
from exocortex.retrieval.search.results import LinkedMemory, ScoredMemory


def memory(record: MemoryRecord) -> common_pb2.Memory:
    return memory_to_proto(record)


def stamp(value: datetime) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(value)
    return out


def search_result(item: ScoredMemory) -> retrieval_pb2.SearchResult:
    fused = item.fused
    b = item.breakdown
    return retrieval_pb2.SearchResult(
        memory=memory(item.memory),
        score=item.score,
        preview=item.preview,
        breakdown=retrieval_pb2.ScoreBreakdown(
            fused=fused.score,
            vector=fused.raw_scores.get("vector", 0.0),
            keyword=fused.raw_scores.get("keyword", 0.0),
            vector_rank=fused.ranks.get("vector", 0),
            keyword_rank=fused.ranks.get("keyword", 0),
            graph_rank=fused.ranks.get("graph", 0),
            recency=b.get("recency", 0.0),
            frequency=b.get("frequency", 0.0),
            usefulness=b.get("usefulness", 0.0),
            valence=b.get("valence", 0.0),
            tag=b.get("tag", 0.0),
            graph=b.get("graph", 0.0),
            metadata_penalty=b.get("metadata_penalty", 1.0),
            boost=b.get("boost", 1.0),
            neighbour=b.get("neighbour", 0.0),
            quality=b.get("quality", 0.0),
            goal_relevance=b.get("goal_relevance", 0.0),
        ),
    )


def linked_memory(item: LinkedMemory) -> retrieval_pb2.LinkedMemory:
    return retrieval_pb2.LinkedMemory(
        memory=memory(item.memory),
        linked_from=item.link.linked_from,
        link_type=item.link.link_type,
        strength=item.link.strength,
    )


def entity(record: EntityRecord) -> retrieval_pb2.Entity:
    aliases = record.aliases or []
    return retrieval_pb2.Entity(
        id=record.id,
        namespace=record.namespace,
        name=record.name,
        type=record.type,
        aliases=[str(a) for a in aliases] if isinstance(aliases, list) else [],
        metadata_json=json.dumps(record.metadata or {}, separators=(",", ":")),
        tags=list(record.tags or []),
        memory_count=int(record.memory_count or 0),
        created_at=stamp(record.created_at),
        updated_at=stamp(record.updated_at),
    )


def report(body: dict[str, Any]) -> retrieval_pb2.Report:
    struct = struct_pb2.Struct()
    struct.update(body)
    return retrieval_pb2.Report(body=struct)
