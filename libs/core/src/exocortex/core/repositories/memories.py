"""Reading and writing rows of ``memories`` (and their tags)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import class_row

from exocortex.core import scope
from exocortex.core.db.arrays import TextArray
from exocortex.core.records import ATTRIBUTION_FIELDS, MemoryRecord
from exocortex.core.rpc.records import memory_to_proto
from exocortex.proto.v1 import common_pb2

Row = dict[str, Any]

# Every column but the embedding (large, and never shown by the API), with the access counts
# kept in the narrow memory_usage table (no row there: never accessed).
_COLUMNS = """
    m.id, m.namespace, m.content, m.content_type, m.source, m.source_uri, m.importance,
    m.valence, m.is_active, m.is_metadata, m.parent_id, m.chunk_index, m.consolidated_into,
    m.superseded_by, m.content_hash, m.keywords, m.embedding_model,
    coalesce(u.access_count, 0) as access_count, u.last_accessed_at,
    m.useful_count, m.expires_at, m.provider, m.model_id, m.model_name,
    m.agent, m.session_id, m.conversation_id, m.metadata, m.enrichment_status, m.created_at,
    m.updated_at, m.version, m.archived_by,
    coalesce(array(select t.tag from memory_tags t where t.memory_id = m.id order by t.tag),
             '{}'::text[]) as tags
"""

# One join for both counters (callers append WHERE / ORDER BY on m.*).
_FROM = "FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id"
SELECT_MEMORY = f"SELECT {_COLUMNS} {_FROM}"
SELECT_MEMORY_WITH_EMBEDDING = f"SELECT {_COLUMNS}, m.embedding {_FROM}"


@dataclass
class NewMemory:
    id: str
    namespace: str
    content: str
    content_type: str
    source: str
    importance: float
    valence: float
    content_hash: str
    is_metadata: bool = False
    source_uri: str | None = None
    parent_id: str | None = None
    chunk_index: int | None = None
    keywords: str = ""
    embedding: bytes | None = None
    embedding_model: str | None = None
    embedding_dim: int | None = None
    expires_at: datetime | None = None
    attribution: dict[str, str | None] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    enrichment_status: str = "pending"


async def insert(conn: AsyncConnection[Row], memory: NewMemory) -> Row:
    """Insert one row and its tags; the caller owns the transaction."""
    attribution = [memory.attribution.get(key) for key in ATTRIBUTION_FIELDS]
    cur = await conn.execute(
        """
        INSERT INTO memories (id, namespace, content, content_type, source, source_uri,
            importance, valence, is_metadata, parent_id, chunk_index, content_hash, keywords,
            embedding, embedding_model, embedding_dim, expires_at, provider, model_id,
            model_name, agent, session_id, conversation_id, metadata, enrichment_status)
        VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
            %s, %s, %s, %s, %s, %s, %s, %s)
        RETURNING id
        """,
        (
            memory.id,
            memory.namespace,
            memory.content,
            memory.content_type,
            memory.source,
            memory.source_uri,
            memory.importance,
            memory.valence,
            memory.is_metadata,
            memory.parent_id,
            memory.chunk_index,
            memory.content_hash,
            memory.keywords,
            memory.embedding,
            memory.embedding_model,
            memory.embedding_dim,
            memory.expires_at,
            *attribution,
            json.dumps(memory.metadata),
            memory.enrichment_status,
        ),
    )
    await cur.fetchone()
    if memory.tags:
        async with conn.cursor() as tag_cur:
            await tag_cur.executemany(
                "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                [(memory.id, tag) for tag in memory.tags],
            )
    row = await get(conn, memory.id)
    assert row is not None
    return row


async def get(conn: AsyncConnection[Row], memory_id: str) -> Row | None:
    """The row, or None when it does not exist or lies outside the caller's scope."""
    cond, params = scope.sql_filter()
    cur = await conn.execute(f"{SELECT_MEMORY} WHERE m.id = %s AND {cond}", (memory_id, *params))
    return await cur.fetchone()


async def get_many(
    conn: AsyncConnection[Row], ids: Sequence[str], *, with_embedding: bool = False
) -> dict[str, Row]:
    if not ids:
        return {}
    select = SELECT_MEMORY_WITH_EMBEDDING if with_embedding else SELECT_MEMORY
    cond, params = scope.sql_filter()
    cur = await conn.execute(f"{select} WHERE m.id = ANY(%s) AND {cond}", (TextArray(ids), *params))
    return {row["id"]: row for row in await cur.fetchall()}


async def get_records(
    conn: AsyncConnection[Any], ids: Sequence[str], *, with_embedding: bool = False
) -> dict[str, MemoryRecord]:
    """Typed rows by id, for the ids that exist within the caller's scope."""
    if not ids:
        return {}
    select = SELECT_MEMORY_WITH_EMBEDDING if with_embedding else SELECT_MEMORY
    cond, params = scope.sql_filter()
    async with conn.cursor(row_factory=class_row(MemoryRecord)) as cur:
        await cur.execute(f"{select} WHERE m.id = ANY(%s) AND {cond}", (TextArray(ids), *params))
        return {record.id: record for record in await cur.fetchall()}


async def get_record(conn: AsyncConnection[Any], memory_id: str) -> MemoryRecord | None:
    """The typed row, or None when it does not exist or lies outside the caller's scope."""
    return (await get_records(conn, [memory_id])).get(memory_id)


# The unique index that allows one active root memory per text (namespace, type, hash): a
# store that trips it lost a race to an identical store.
ACTIVE_ROOT_HASH_INDEX = "uq_memories_active_root_hash"


async def find_active_root_by_hash(
    conn: AsyncConnection[Row], namespace: str, content_type: str, digest: str
) -> Row | None:
    cur = await conn.execute(
        f"""{SELECT_MEMORY} WHERE m.namespace = %s AND m.content_type = %s
            AND m.content_hash = %s AND m.is_active AND m.parent_id IS NULL
            ORDER BY m.created_at DESC LIMIT 1""",
        (namespace, content_type, digest),
    )
    return await cur.fetchone()


def to_proto(row: Row) -> common_pb2.Memory:
    """A dict row of ``SELECT_MEMORY`` as protobuf (see ``exocortex.core.rpc.records``)."""
    return memory_to_proto(MemoryRecord.from_row(row))
