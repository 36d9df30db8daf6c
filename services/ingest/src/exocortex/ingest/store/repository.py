"""The SQL of the store path: superseding, folding a duplicate into the memory it repeats,
variants, merge mode and the batch lookups of an import. Functions take the caller's connection,
so a service composes them into one transaction; ``transaction`` turns the unique index's
refusal into ``UniqueClash`` so no service needs to know the driver."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import psycopg

from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.repositories import memories
from exocortex.ingest.store.model import Row

Conn = DictConnection


class UniqueClash(Exception):
    """A unique index refused the write (``constraint`` names it): for a memory, another active
    root in the namespace already holds the same content."""

    def __init__(self, constraint: str | None) -> None:
        super().__init__(constraint or "unique violation")
        self.constraint = constraint

    @property
    def same_content(self) -> bool:
        return self.constraint == memories.ACTIVE_ROOT_HASH_INDEX


@asynccontextmanager
async def transaction(pool: Pool) -> AsyncIterator[Conn]:
    """A connection in a transaction, committed on exit; a unique violation, raised by a
    statement or by the commit, comes out as ``UniqueClash``."""
    try:
        async with pool.connection() as conn, conn.transaction():
            yield conn
    except psycopg.errors.UniqueViolation as exc:
        raise UniqueClash(exc.diag.constraint_name) from exc


async def archive_family(conn: Conn, memory_id: str) -> None:
    """Deactivate a memory and its children (before its successor is inserted: the unique hash
    index allows one active root)."""
    await conn.execute(
        "UPDATE memories SET is_active = false, updated_at = now(), "
        "version = version + 1 WHERE id = %s OR parent_id = %s",
        (memory_id, memory_id),
    )


async def set_superseded_by(conn: Conn, old_id: str, new_id: str) -> None:
    await conn.execute("UPDATE memories SET superseded_by = %s WHERE id = %s", (new_id, old_id))


async def add_family_tags(conn: Conn, memory_id: str, tags: Sequence[str]) -> None:
    """Tag a memory and its children (chunks and variants carry their parent's tags: the
    indexes filter on them)."""
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memory_tags (memory_id, tag) "
            "SELECT id, %s FROM memories WHERE id = %s OR parent_id = %s "
            "ON CONFLICT DO NOTHING",
            [(tag, memory_id, memory_id) for tag in tags],
        )


async def raise_and_merge_metadata(
    conn: Conn, memory_id: str, importance: float, metadata: dict[str, Any]
) -> None:
    """Importance only rises, metadata keys are added or overwritten; a new version."""
    await conn.execute(
        "UPDATE memories SET importance = greatest(importance, %s), "
        "metadata = metadata || %s::jsonb, updated_at = now(), "
        "version = version + 1 WHERE id = %s",
        (importance, json.dumps(metadata), memory_id),
    )


async def touch(conn: Conn, memory_id: str) -> None:
    """A new version of the memory, so its projection (children included) is rebuilt."""
    await conn.execute(
        "UPDATE memories SET updated_at = now(), version = version + 1 WHERE id = %s",
        (memory_id,),
    )


async def lock_is_active(conn: Conn, memory_id: str) -> bool | None:
    """Lock the memory's row; whether it is active (None: it is gone)."""
    cur = await conn.execute(
        "SELECT is_active FROM memories WHERE id = %s FOR UPDATE", (memory_id,)
    )
    row = await cur.fetchone()
    return None if row is None else bool(row["is_active"])


async def variant_count(conn: Conn, parent_id: str, digest: str) -> tuple[int, bool]:
    """How many variants the memory has, and whether one of them has this content hash."""
    cur = await conn.execute(
        "SELECT count(*) AS n, coalesce(bool_or(content_hash = %s), false) AS seen "
        "FROM memories WHERE parent_id = %s AND chunk_index IS NULL",
        (digest, parent_id),
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"]), bool(row["seen"])


async def active_roots_by_hash(
    conn: Conn, keys: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str, str], Row]:
    """Active root memories by (namespace, content type, content hash), in one query."""
    cur = await conn.execute(
        f"""{memories.SELECT_MEMORY}
        WHERE m.is_active AND m.parent_id IS NULL
          AND (m.namespace, m.content_type, m.content_hash) IN (
              SELECT * FROM unnest(%s::text[], %s::text[], %s::text[]))""",
        ([k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys]),
    )
    rows = await cur.fetchall()
    return {(r["namespace"], r["content_type"], r["content_hash"]): r for r in rows}


async def lock_content(conn: Conn, memory_id: str) -> Row | None:
    """Lock the memory's row: its content, whether it is active, its parent."""
    cur = await conn.execute(
        "SELECT content, is_active, parent_id FROM memories WHERE id = %s FOR UPDATE",
        (memory_id,),
    )
    return await cur.fetchone()


async def child_ids(conn: Conn, parent_id: str) -> list[str]:
    """The memory's chunks (in order) and variants."""
    cur = await conn.execute(
        "SELECT id FROM memories WHERE parent_id = %s ORDER BY chunk_index", (parent_id,)
    )
    return [r["id"] for r in await cur.fetchall()]


async def delete_children(conn: Conn, parent_id: str) -> None:
    await conn.execute("DELETE FROM memories WHERE parent_id = %s", (parent_id,))


async def write_merged_text(
    conn: Conn,
    memory_id: str,
    *,
    content: str,
    digest: str,
    embedding: bytes | None,
    model: str | None,
    dim: int | None,
    keywords: str,
    importance: float,
    metadata: dict[str, Any],
    expires_at: datetime | None,
) -> None:
    """Replace the text, vector and keywords of a merge target; importance and metadata only
    grow, and the merged text lives as long as either part would have."""
    await conn.execute(
        """
        UPDATE memories SET content = %(content)s, content_hash = %(hash)s,
            embedding = %(embedding)s, embedding_model = %(model)s, embedding_dim = %(dim)s,
            keywords = %(keywords)s, importance = greatest(importance, %(importance)s),
            metadata = metadata || %(metadata)s::jsonb,
            expires_at = CASE WHEN expires_at IS NULL OR %(expires)s::timestamptz IS NULL
                              THEN NULL ELSE greatest(expires_at, %(expires)s) END,
            enrichment_status = 'pending', updated_at = now(), version = version + 1
        WHERE id = %(id)s
        """,
        {
            "id": memory_id,
            "content": content,
            "hash": digest,
            "embedding": embedding,
            "model": model,
            "dim": dim,
            "keywords": keywords,
            "importance": importance,
            "metadata": json.dumps(metadata),
            "expires": expires_at,
        },
    )


async def add_tags(conn: Conn, memory_id: str, tags: Sequence[str]) -> None:
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(memory_id, tag) for tag in tags],
        )


async def copy_parent_to_chunks(conn: Conn, parent_id: str) -> None:
    """Chunks copy the parent as it is now (a concurrent tag or flag change included)."""
    await conn.execute(
        """
        UPDATE memories c SET importance = m.importance, valence = m.valence,
            is_active = m.is_active, is_metadata = m.is_metadata, expires_at = m.expires_at,
            source_uri = m.source_uri
        FROM memories m WHERE m.id = %s AND c.parent_id = m.id
        """,
        (parent_id,),
    )
    await conn.execute(
        "INSERT INTO memory_tags (memory_id, tag) SELECT c.id, t.tag FROM memories c "
        "JOIN memory_tags t ON t.memory_id = c.parent_id WHERE c.parent_id = %s "
        "ON CONFLICT DO NOTHING",
        (parent_id,),
    )
