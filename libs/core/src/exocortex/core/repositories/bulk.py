"""Many memory rows and their events in one round trip each (bulk import, and the single stores
committed together)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from psycopg import AsyncConnection, AsyncCursor
from psycopg.types.json import Jsonb

from exocortex.core.db.outbox import NOTIFY_CHANNEL
from exocortex.core.records import ATTRIBUTION_FIELDS
from exocortex.core.repositories.memories import NewMemory

Row = dict[str, Any]


# The columns of ``memories.SELECT_MEMORY`` a new row has in the table itself (the rest: no
# accesses yet, and its tags, are known without asking).
_RETURNING = """
    RETURNING id, namespace, content, content_type, source, source_uri, importance, valence,
        is_active, is_metadata, parent_id, chunk_index, consolidated_into, superseded_by,
        content_hash, keywords, embedding_model, useful_count, expires_at, provider, model_id,
        model_name, agent, session_id, conversation_id, metadata, enrichment_status,
        created_at, updated_at, version
"""


async def insert_memories(
    conn: AsyncConnection[Row], items: Sequence[NewMemory], *, returning: bool = False
) -> dict[str, Row]:
    """Insert rows (version 1) and tags with ``executemany``; the caller owns the transaction
    and must insert parents before their chunks (the order of ``items`` is kept).

    With ``returning``, the rows as inserted, by id, in the shape of ``memories.get`` (no
    re-read: the statement returns them)."""
    if not items:
        return {}
    inserted: dict[str, Row] = {}
    async with conn.cursor() as cur:
        await execute_each(
            cur,
            """
            INSERT INTO memories (id, namespace, content, content_type, source, source_uri,
                importance, valence, is_metadata, parent_id, chunk_index, content_hash, keywords,
                embedding, embedding_model, embedding_dim, expires_at, provider, model_id,
                model_name, agent, session_id, conversation_id, metadata, enrichment_status)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                %s, %s, %s, %s, %s, %s, %s, %s)
            """
            + (_RETURNING if returning else ""),
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
            returning=returning,
        )
        if returning:
            tags_of = {m.id: sorted(set(m.tags)) for m in items}
            while True:
                row = await cur.fetchone()
                if row is not None:
                    row = dict(row)
                    row.update(access_count=0, last_accessed_at=None, tags=tags_of[row["id"]])
                    inserted[row["id"]] = row
                if not cur.nextset():
                    break
        tags = [(m.id, tag) for m in items for tag in m.tags]
        if tags:
            await execute_each(
                cur,
                "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                tags,
            )
    return inserted


async def enqueue_events(
    conn: AsyncConnection[Row],
    events: Sequence[tuple[str, bytes, dict[str, str]]],
    *,
    wake_relay: bool = True,
) -> None:
    """Outbox rows for (subject, payload, headers), with one wake-up for the relay (through
    Postgres, so it reaches the relay in whichever process runs it). ``wake_relay=False`` where
    the caller wakes the relay of its own process once committed (ingest's single stores):
    the notification would only wake it a second time, for an outbox already drained."""
    if not events:
        return
    async with conn.cursor() as cur:
        await execute_each(
            cur,
            "INSERT INTO outbox (subject, payload, headers) VALUES (%s, %s, %s)",
            [(subject, payload, Jsonb(headers)) for subject, payload, headers in events],
        )
        if wake_relay:
            await cur.execute("SELECT pg_notify(%s, '')", (NOTIFY_CHANNEL,))


async def execute_each(
    cur: AsyncCursor[Any], sql: str, params: Sequence[Any], *, returning: bool = False
) -> None:
    """``sql`` once for each set of ``params``: ``executemany``, or ``execute`` for a single set
    (a lone store's group): ``executemany`` enters and leaves pipeline mode, which cost about
    0.1 ms of CPU a statement more than ``execute`` for one row. Either way the results are read
    with ``fetchone`` and ``nextset``."""
    if len(params) == 1:
        await cur.execute(sql, params[0])
    else:
        await cur.executemany(sql, params, returning=returning)
