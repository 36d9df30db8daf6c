"""Dedup merge mode (``dedup.merge_enabled``): a store whose nearest memory is close but not a
duplicate (``dedup.merge_threshold`` ≤ cosine < ``dedup.similarity_threshold``) is appended to
that memory instead of becoming a new one.

The merged text is the old text, ``SEPARATOR``, then the new text; it is re-hashed, re-embedded
(and re-chunked when it grows past ``chunking.max_length``), so the indexes see it through the
usual ``memory.updated`` event, and it is enriched again.

Content is never lost and concurrent merges stay safe: the merged text is built from a read,
embedded outside any transaction, and committed only if the target's content is still the one
that was read (checked under ``FOR UPDATE``). Otherwise it is rebuilt from the new content, a
few times; when the target is gone, archived, contended or the result cannot be written, the
caller stores the new text as a memory of its own.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.domain.keywords import generate_keywords
from exocortex.core.domain.text import content_hash
from exocortex.core.logging import get_logger
from exocortex.core.repositories import bulk, memories
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest import events
from exocortex.ingest.config import WriteConfig
from exocortex.ingest.prepare import Prepared, chunks_for
from exocortex.ingest.rows import build_rows

log = get_logger(__name__)

Row = dict[str, Any]
Pool = AsyncConnectionPool[psycopg.AsyncConnection[Row]]

SEPARATOR = "\n\n---\n\n"
# Each attempt re-embeds; more than a few means the target is being rewritten right now.
MAX_ATTEMPTS = 4


def already_merged(target: Row, p: Prepared) -> bool:
    """The new text is the target or one of its merged sections (a retried store): merging it
    again would only repeat it."""
    return p.content.strip() in {s.strip() for s in target["content"].split(SEPARATOR)}


def _merged(target: Row, p: Prepared, config: WriteConfig) -> Prepared:
    """The target with the new text appended, as rows to embed and build (chunks inherit the
    parent's columns after the write)."""
    content = target["content"] + SEPARATOR + p.content
    tags = list(dict.fromkeys([*target["tags"], *p.tags]))
    return Prepared(
        content=content,
        namespace=target["namespace"],
        content_type=target["content_type"],
        source=target["source"],
        source_uri=target["source_uri"],
        importance=max(float(target["importance"]), p.importance),
        valence=float(target["valence"]),
        tags=tags,
        metadata={},
        is_metadata=bool(target["is_metadata"]),
        benchmark=False,
        expires_at=target["expires_at"],
        attribution={},
        digest=content_hash(content, normalize_whitespace=config.normalize_whitespace),
        keywords=generate_keywords(content, tags),
        chunks=chunks_for(content, config),
    )


async def _current_content(conn: AsyncConnection[Row], memory_id: str) -> Row | None:
    cur = await conn.execute(
        "SELECT content, is_active, parent_id FROM memories WHERE id = %s FOR UPDATE",
        (memory_id,),
    )
    return await cur.fetchone()


async def _write(
    conn: AsyncConnection[Row], target_id: str, merged: Prepared, p: Prepared, rows: list[NewMemory]
) -> Row:
    """Replace the target's text, vector and chunks; tags and metadata only grow. The caller
    holds the row lock."""
    parent = rows[0]
    cur = await conn.execute(
        "SELECT id FROM memories WHERE parent_id = %s ORDER BY chunk_index", (target_id,)
    )
    removed = [r["id"] for r in await cur.fetchall()]
    if removed:
        await conn.execute("DELETE FROM memories WHERE parent_id = %s", (target_id,))
    await conn.execute(
        """
        UPDATE memories SET content = %(content)s, content_hash = %(hash)s,
            embedding = %(embedding)s, embedding_model = %(model)s, embedding_dim = %(dim)s,
            keywords = %(keywords)s, importance = greatest(importance, %(importance)s),
            metadata = metadata || %(metadata)s::jsonb,
            -- The merged text must live as long as either part would have.
            expires_at = CASE WHEN expires_at IS NULL OR %(expires)s::timestamptz IS NULL
                              THEN NULL ELSE greatest(expires_at, %(expires)s) END,
            enrichment_status = 'pending', updated_at = now(), version = version + 1
        WHERE id = %(id)s
        """,
        {
            "id": target_id,
            "content": merged.content,
            "hash": merged.digest,
            "embedding": parent.embedding,
            "model": parent.embedding_model,
            "dim": parent.embedding_dim,
            "keywords": merged.keywords,
            "importance": p.importance,
            "metadata": json.dumps(p.metadata),
            "expires": p.expires_at,
        },
    )
    async with conn.cursor() as c:
        await c.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            [(target_id, tag) for tag in merged.tags],
        )
    new_chunks = rows[1:]
    if new_chunks:
        await bulk.insert_memories(conn, new_chunks)
        # Chunks copy the parent as it is now (a concurrent tag or flag change included).
        await conn.execute(
            """
            UPDATE memories c SET importance = m.importance, valence = m.valence,
                is_active = m.is_active, is_metadata = m.is_metadata, expires_at = m.expires_at,
                source_uri = m.source_uri
            FROM memories m WHERE m.id = %s AND c.parent_id = m.id
            """,
            (target_id,),
        )
        await conn.execute(
            "INSERT INTO memory_tags (memory_id, tag) SELECT c.id, t.tag FROM memories c "
            "JOIN memory_tags t ON t.memory_id = c.parent_id WHERE c.parent_id = %s "
            "ON CONFLICT DO NOTHING",
            (target_id,),
        )
    row = await memories.get(conn, target_id)
    assert row is not None
    await events.emit(conn, row, "updated", [*removed, *(r.id for r in new_chunks)])
    return row


async def merge_into(
    pool: Pool, embedder: EmbeddingClient, target_id: str, p: Prepared, config: WriteConfig
) -> Row | None:
    """Append ``p`` to the target and return the merged memory, or None when the caller should
    store ``p`` as a memory of its own."""
    for attempt in range(MAX_ATTEMPTS):
        async with pool.connection() as conn:
            target = await memories.get(conn, target_id)
        if target is None or not target["is_active"] or target["parent_id"] is not None:
            return None
        merged = _merged(target, p, config)
        vectors = await embedder.embed(merged.embed_texts())
        rows = build_rows(
            merged,
            vectors,
            model=embedder.fingerprint,
            dim=embedder.dimensions,
            memory_id=target_id,
        )
        try:
            async with pool.connection() as conn, conn.transaction():
                now = await _current_content(conn, target_id)
                if now is None or not now["is_active"] or now["parent_id"] is not None:
                    return None
                if now["content"] != target["content"]:
                    # Another merge or an edit got there first: rebuild on the new text.
                    log.info("merge target changed meanwhile; retrying", attempt=attempt + 1)
                    continue
                return await _write(conn, target_id, merged, p, rows)
        except psycopg.errors.UniqueViolation:
            # The merged text equals another active memory's: keep both texts apart.
            log.info("merged text would duplicate another memory; storing separately")
            return None
    log.warning("merge target kept changing; storing separately", memory_id=target_id)
    return None
