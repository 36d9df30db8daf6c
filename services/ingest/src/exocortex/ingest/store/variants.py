"""Near-duplicate wording kept as a variant of the memory it duplicates.

When semantic dedup reuses an existing memory (``dedup.skip_insert_on_match``), the new text is
not stored as a memory of its own. Its wording is still the user's, though, and it often holds
words the existing memory lacks ("the kettle is above the *kitchen* sink"). Dropping it would make
the memory unreachable by exactly the words the user last used for it. So the text is kept as a
*variant* (``dedup.keep_variants``, on by default): a child row of the memory it duplicates
(``parent_id`` set, no ``chunk_index``) with its own vector and keywords, indexed like a chunk.
A search that matches the variant's wording finds the parent memory, once.

Variants are not memories: they are not counted, listed or returned on their own, and they follow
their parent the way chunks do (tags, archive, restore, delete, and a content edit replaces them).
A memory keeps at most ``dedup.max_variants`` of them; a retried store adds none. A text that
finds no room (the list is full, or the memory was archived since the match) is not folded at
all: the caller stores it as a memory of its own, because a write that was acknowledged must stay
findable by its own words.
"""

from __future__ import annotations

from enum import Enum

from exocortex.core.db.pool import DictConnection
from exocortex.core.domain.vectors import Vector, to_bytes
from exocortex.core.ids import new_id
from exocortex.core.repositories import bulk
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest.store import repository
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import Prepared


class Kept(Enum):
    """What became of a near duplicate's wording."""

    ADDED = "added"  # a new variant row
    ALREADY = "already"  # the memory's own text or an existing variant: findable already
    NO_ROOM = "no-room"  # the list is full or the memory is no longer active


async def add_variant(
    conn: DictConnection,
    parent: Row,
    p: Prepared,
    vector: Vector,
    *,
    tags: list[str],
    model: str,
    dim: int,
    limit: int,
) -> tuple[Kept, str | None]:
    """Insert ``p``'s text as a variant of ``parent`` (the caller's transaction): the outcome and
    the new row's id when one was added. ``NO_ROOM`` leaves the parent untouched; the caller
    must then keep the text some other way."""
    if p.digest == parent.get("content_hash"):
        return Kept.ALREADY, None
    if limit <= 0:
        return Kept.NO_ROOM, None
    # Serialise variants of one memory, so two racing stores of one text keep it once, and see
    # the parent's current state (it may have been archived since the match).
    if not await repository.lock_is_active(conn, parent["id"]):
        return Kept.NO_ROOM, None
    count, seen = await repository.variant_count(conn, parent["id"], p.digest)
    if seen:
        return Kept.ALREADY, None
    if count >= limit:
        return Kept.NO_ROOM, None
    variant = NewMemory(
        id=new_id(),
        namespace=parent["namespace"],
        content=p.content,
        content_type=parent["content_type"],
        source=p.source,
        source_uri=parent.get("source_uri"),
        importance=float(parent["importance"]),
        valence=float(parent["valence"]),
        content_hash=p.digest,
        is_metadata=bool(parent["is_metadata"]),
        parent_id=parent["id"],
        keywords=p.keywords,
        embedding=to_bytes(vector),
        embedding_model=model,
        embedding_dim=dim,
        expires_at=parent.get("expires_at"),
        attribution=p.attribution,
        tags=tags,
        # Enrichment works on memories; the parent already carries this meaning.
        enrichment_status="skipped",
    )
    await bulk.insert_memories(conn, [variant])
    return Kept.ADDED, variant.id
