"""Building rows for a prepared memory: the parent and, for long content, its chunks."""

from __future__ import annotations

from exocortex.core.domain.text import content_hash
from exocortex.core.domain.vectors import Vector, to_bytes
from exocortex.core.ids import new_id
from exocortex.core.repositories.memories import NewMemory
from exocortex.ingest.store.prepare import Prepared


def memory_row(
    p: Prepared, vector: Vector | None, *, model: str, dim: int, memory_id: str
) -> NewMemory:
    """The row of a prepared memory as a whole: its own content, vector (when it has one),
    tags and metadata. Callers adjust what differs (a parent, the enrichment status)."""
    return NewMemory(
        id=memory_id,
        namespace=p.namespace,
        content=p.content,
        content_type=p.content_type,
        source=p.source,
        source_uri=p.source_uri,
        importance=p.importance,
        valence=p.valence,
        content_hash=p.digest,
        is_metadata=p.is_metadata,
        keywords=p.keywords,
        embedding=to_bytes(vector) if vector is not None else None,
        embedding_model=model if vector is not None else None,
        embedding_dim=dim if vector is not None else None,
        expires_at=p.expires_at,
        attribution=p.attribution,
        metadata=p.metadata,
        tags=p.tags,
        enrichment_status="skipped" if p.benchmark else "pending",
    )


def build_rows(
    p: Prepared, vectors: list[Vector], *, model: str, dim: int, memory_id: str | None = None
) -> list[NewMemory]:
    """Parent first, then chunks in order. ``vectors`` are ``p.embed_texts()``'s embeddings."""
    parent_id = memory_id or new_id()
    has_vectors = bool(vectors)
    # A chunked parent is found through its chunks; it carries no vector of its own.
    own_vector = vectors[0] if has_vectors and not p.chunks else None
    parent = memory_row(p, own_vector, model=model, dim=dim, memory_id=parent_id)
    rows = [parent]
    for index, text in enumerate(p.chunks):
        rows.append(
            NewMemory(
                id=new_id(),
                namespace=p.namespace,
                content=text,
                content_type=p.content_type,
                source=p.source,
                source_uri=p.source_uri,
                importance=p.importance,
                valence=p.valence,
                content_hash=content_hash(text),
                is_metadata=p.is_metadata,
                parent_id=parent_id,
                chunk_index=index,
                embedding=to_bytes(vectors[index]) if has_vectors else None,
                embedding_model=model if has_vectors else None,
                embedding_dim=dim if has_vectors else None,
                expires_at=p.expires_at,
                attribution=p.attribution,
                metadata={},
                tags=p.tags,
                enrichment_status="skipped",
            )
        )
    return rows
