"""StoreMemory: strip, normalise, dedup, embed, and commit the row with its event."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import psycopg
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg_pool import AsyncConnectionPool

from exocortex.core.bus import subjects
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db import outbox
from exocortex.core.domain.tags import alias_map, normalize_tags
from exocortex.core.domain.text import content_hash, strip_private
from exocortex.core.domain.vectors import to_bytes
from exocortex.core.errors import InvalidArgument
from exocortex.core.ids import new_id
from exocortex.core.logging import get_logger
from exocortex.core.repositories import memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.ingest import metrics, validation
from exocortex.proto.v1 import events_pb2, ingest_pb2

log = get_logger(__name__)

Row = dict[str, Any]

_ATTRIBUTION: tuple[
    Literal["provider", "model_id", "model_name", "agent", "session_id", "conversation_id"], ...
] = ("provider", "model_id", "model_name", "agent", "session_id", "conversation_id")


@dataclass
class StoreResult:
    memory: Row
    dedup_action: str
    matched_id: str | None = None
    similarity: float | None = None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _datetime(stamp: Timestamp) -> datetime:
    return stamp.ToDatetime(tzinfo=UTC)


def memory_event(row: Row, change: str) -> bytes:
    now = Timestamp()
    now.GetCurrentTime()
    event = events_pb2.MemoryChanged(
        memory_id=row["id"],
        version=int(row["version"]),
        namespace=row["namespace"],
        change=change,
        occurred_at=now,
    )
    return event.SerializeToString()


class IngestService:
    def __init__(
        self,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]],
        embedder: EmbeddingClient,
        settings_cache: SettingsCache,
        *,
        max_content_chars: int,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._settings = settings_cache
        self._max_content_chars = max_content_chars

    async def store(self, request: ingest_pb2.StoreMemoryRequest) -> StoreResult:
        start = time.perf_counter()
        outcome = "error"
        try:
            result = await self._store(request)
            outcome = result.dedup_action
            metrics.STORES.labels(result.dedup_action).inc()
            return result
        finally:
            metrics.STORE_DURATION.labels(outcome).observe(time.perf_counter() - start)

    async def _store(self, request: ingest_pb2.StoreMemoryRequest) -> StoreResult:
        settings = await self._settings.get()
        validation.check_content(request.content, self._max_content_chars)
        content = strip_private(request.content)
        if not content:
            raise InvalidArgument(
                "content is empty after removing <private> blocks; store some public text",
                field="content",
            )
        namespace = validation.check_namespace(request.namespace)
        content_type = validation.check_choice(
            request.content_type if request.HasField("content_type") else "text",
            validation.CONTENT_TYPES,
            "content_type",
        )
        source = validation.check_choice(
            request.source if request.HasField("source") else "api", validation.SOURCES, "source"
        )
        validation.check_tags(list(request.tags))
        tags = normalize_tags(request.tags, alias_map(settings))
        importance = validation.check_range(
            request.importance if request.HasField("importance") else 0.5, 0.0, 1.0, "importance"
        )
        valence = validation.check_range(
            request.valence if request.HasField("valence") else 0.0, -1.0, 1.0, "valence"
        )
        metadata = validation.parse_metadata(request.metadata_json)
        attribution: dict[str, str | None] = {
            key: (getattr(request.attribution, key) or None)
            if request.attribution.HasField(key)
            else (str(metadata[key]) if metadata.get(key) else None)
            for key in _ATTRIBUTION
        }
        digest = content_hash(
            content, normalize_whitespace=_truthy(settings.get("dedup.hash_normalize_whitespace"))
        )

        if _truthy(settings.get("dedup.hash_enabled", "true")):
            async with self._pool.connection() as conn:
                existing = await memories.find_active_root_by_hash(
                    conn, namespace, content_type, digest
                )
            if existing is not None:
                return await self._reuse(existing, tags, importance, reason="hash")

        vectors = await self._embedder.embed([content])
        memory = memories.NewMemory(
            id=new_id(),
            namespace=namespace,
            content=content,
            content_type=content_type,
            source=source,
            source_uri=request.source_uri if request.HasField("source_uri") else None,
            importance=importance,
            valence=valence,
            content_hash=digest,
            is_metadata=request.is_metadata if request.HasField("is_metadata") else False,
            embedding=to_bytes(vectors[0]),
            embedding_model=self._embedder.fingerprint,
            embedding_dim=self._embedder.dimensions,
            expires_at=_datetime(request.expires_at) if request.HasField("expires_at") else None,
            attribution=attribution,
            metadata=metadata,
            tags=tags,
        )
        try:
            async with self._pool.connection() as conn, conn.transaction():
                row = await memories.insert(conn, memory)
                await outbox.enqueue(
                    conn, subjects.MEMORY_STORED, memory_event(row, "stored"), _headers(row)
                )
        except psycopg.errors.UniqueViolation:
            # A concurrent identical store won the race: the unique index guarantees one row.
            async with self._pool.connection() as conn:
                existing = await memories.find_active_root_by_hash(
                    conn, namespace, content_type, digest
                )
            if existing is None:
                raise
            return await self._reuse(existing, tags, importance, reason="constraint")
        log.info("memory stored", memory_id=row["id"], namespace=namespace)
        return StoreResult(memory=row, dedup_action="created")

    async def _reuse(
        self, existing: Row, tags: list[str], importance: float, *, reason: str
    ) -> StoreResult:
        """The skip path: keep the existing memory, merge the new tags, raise importance."""
        new_tags = [t for t in tags if t not in set(existing["tags"])]
        raise_importance = importance > float(existing["importance"])
        if new_tags or raise_importance:
            async with self._pool.connection() as conn, conn.transaction():
                if new_tags:
                    async with conn.cursor() as cur:
                        await cur.executemany(
                            "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) "
                            "ON CONFLICT DO NOTHING",
                            [(existing["id"], tag) for tag in new_tags],
                        )
                await conn.execute(
                    "UPDATE memories SET importance = greatest(importance, %s), "
                    "updated_at = now(), version = version + 1 WHERE id = %s",
                    (importance, existing["id"]),
                )
                row = await memories.get(conn, existing["id"])
                assert row is not None
                await outbox.enqueue(
                    conn, subjects.MEMORY_UPDATED, memory_event(row, "updated"), _headers(row)
                )
            existing = row
        log.info("duplicate store reused existing memory", memory_id=existing["id"], reason=reason)
        return StoreResult(
            memory=existing, dedup_action="skipped", matched_id=existing["id"], similarity=1.0
        )


def _headers(row: Row) -> dict[str, str]:
    from exocortex.core.logging import current_correlation_id

    cid = current_correlation_id()
    return {subjects.CORRELATION_HEADER: cid} if cid else {}
