"""Many memory rows and their events in one round trip each (bulk import)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from exocortex.core.db.outbox import NOTIFY_CHANNEL
from exocortex.core.records import ATTRIBUTION_FIELDS
from exocortex.core.repositories.memories import NewMemory

Row = dict[str, Any]


async def insert_memories(conn: AsyncConnection[Row], items: Sequence[NewMemory]) -> None:
    """Insert rows (version 1) and tags with ``executemany``; the caller owns the transaction
    and must insert parents before their chunks (the order of ``items`` is kept)."""
    if not items:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            """
            INSERT INTO memories (id, namespace, content, content_type, source, source_uri,
                importance, valence, is_metadata, parent_id, chunk_index, content_hash, keywords,
                embedding, embedding_model, embedding_dim, expires_at, provider, model_id,
                model_name, agent, session_id, conversation_id, metadata, enrichment_status)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                %s, %s, %s, %s, %s, %s, %s, %s)
            """,
            [
                (
                    m.id,
                    m.namespace,
                    m.content,
                    m.content_type,
                    m.source,
                    m.source_uri,
                    m.importance,
                    m.valence,
                    m.is_metadata,
                    m.parent_id,
                    m.chunk_index,
                    m.content_hash,
                    m.keywords,
                    m.embedding,
                    m.embedding_model,
                    m.embedding_dim,
                    m.expires_at,
                    *[m.attribution.get(key) for key in ATTRIBUTION_FIELDS],
                    json.dumps(m.metadata),
                    m.enrichment_status,
                )
                for m in items
            ],
        )
        tags = [(m.id, tag) for m in items for tag in m.tags]
        if tags:
            await cur.executemany(
                "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                tags,
            )


async def enqueue_events(
    conn: AsyncConnection[Row],
    events: Sequence[tuple[str, bytes, dict[str, str]]],
) -> None:
    """Outbox rows for (subject, payload, headers), with one wake-up for the relay."""
    if not events:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO outbox (subject, payload, headers) VALUES (%s, %s, %s)",
            [(subject, payload, Jsonb(headers)) for subject, payload, headers in events],
        )
        await cur.execute("SELECT pg_notify(%s, '')", (NOTIFY_CHANNEL,))
