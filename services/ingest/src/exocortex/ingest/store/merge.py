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

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import DictConnection, Pool
from exocortex.core.domain.keywords import memory_keywords
from exocortex.core.domain.text import content_hash
from exocortex.core.logging import get_logger
from exocortex.core.repositories import bulk, memories
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest import events
from exocortex.ingest.store import repository
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import Prepared, chunks_for
from exocortex.ingest.store.repository import UniqueClash
from exocortex.ingest.store.rows import build_rows

log = get_logger(__name__)

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
        keywords=memory_keywords(content, tags, config.entity_confidence),
        chunks=chunks_for(content, config),
    )


async def _write(
    conn: DictConnection, target_id: str, merged: Prepared, p: Prepared, rows: list[NewMemory]
) -> Row:
    """Replace the target's text, vector and chunks; tags and metadata only grow. The caller
    holds the row lock."""
    parent = rows[0]
    removed = await repository.child_ids(conn, target_id)
    if removed:
        await repository.delete_children(conn, target_id)
    await repository.write_merged_text(
        conn,
        target_id,
        content=merged.content,
        digest=merged.digest,
        embedding=parent.embedding,
        model=parent.embedding_model,
        dim=parent.embedding_dim,
        keywords=merged.keywords,
        importance=p.importance,
        metadata=p.metadata,
        expires_at=p.expires_at,
    )
    # Only the new text's tags: the target's were read before the lock, and adding them back
    # would undo a tag an edit removed meanwhile.
    await repository.add_tags(conn, target_id, p.tags)
    new_chunks = rows[1:]
    if new_chunks:
        await bulk.insert_memories(conn, new_chunks)
        await repository.copy_parent_to_chunks(conn, target_id)
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
            async with repository.transaction(pool) as conn:
                now = await repository.lock_content(conn, target_id)
                if now is None or not now["is_active"] or now["parent_id"] is not None:
                    return None
                if now["content"] != target["content"]:
                    # Another merge or an edit got there first: rebuild on the new text.
                    log.info("merge target changed meanwhile; retrying", attempt=attempt + 1)
                    continue
                return await _write(conn, target_id, merged, p, rows)
        except UniqueClash:
            # The merged text equals another active memory's: keep both texts apart.
            log.info("merged text would duplicate another memory; storing separately")
            return None
    log.warning("merge target kept changing; storing separately", memory_id=target_id)
    return None
