"""Nearest neighbours over a whole namespace, for the write side (semantic dedup, relation
discovery, contradiction candidates). Only this process opens the vector index, so other
services ask here instead of scanning a window of recent rows."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import InvalidArgument
from exocortex.indexes.base import IndexFilter, IndexHit, VectorIndex

MAX_QUERIES = 512
MAX_LIMIT = 200
# The most hits one lookup reads while looking for roots among chunks and variants.
MAX_FETCH = 1_000


@dataclass(frozen=True)
class NearestProbe:
    """One vector to look around, and the memories not to answer for it."""

    vector: Vector
    exclude_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class NearestQuery:
    probes: tuple[NearestProbe, ...]
    namespace: str = ""
    # Zero: 10.
    limit: int = 0
    min_similarity: float = 0.0
    roots_only: bool = False
    content_type: str | None = None
    tags: tuple[str, ...] = ()
    exclude_metadata: bool = False


@dataclass(frozen=True)
class NearestHit:
    memory_id: str
    similarity: float
    parent_id: str | None = None


async def nearest(index: VectorIndex, q: NearestQuery) -> list[list[NearestHit]]:
    """The hits of each probe, most similar first."""
    if len(q.probes) > MAX_QUERIES:
        raise InvalidArgument(f"at most {MAX_QUERIES} queries per call", field="queries")
    limit = q.limit or 10
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")

    async def one(probe: NearestProbe) -> list[NearestHit]:
        vector = probe.vector
        if vector.size == 0 or not np.all(np.isfinite(vector)):
            raise InvalidArgument("vector must be non-empty finite float32s", field="vector")
        flt = IndexFilter(
            namespace=q.namespace or "default",
            content_type=q.content_type,
            tags_any=q.tags,
            exclude_metadata=q.exclude_metadata,
            exclude_ids=probe.exclude_ids,
        )
        fetch = limit * 3 if q.roots_only else limit
        while True:
            hits = await index.search(vector, fetch, flt, write_side=True)
            out = _hits(hits, q, limit)
            # Chunk and variant hits are dropped after the search when only roots are wanted,
            # so ask for more. A memory kept in many wordings (variants) can fill the first
            # hits on its own and push its own root out of them: then ask again, for more.
            done = (
                not q.roots_only
                or len(out) >= limit
                or len(hits) < fetch
                or hits[-1].score < q.min_similarity
                or fetch >= MAX_FETCH
            )
            if done:
                return out
            fetch = min(fetch * 4, MAX_FETCH)

    return list(await asyncio.gather(*(one(p) for p in q.probes)))


def _hits(hits: list[IndexHit], q: NearestQuery, limit: int) -> list[NearestHit]:
    out: list[NearestHit] = []
    for hit in hits:
        if hit.score < q.min_similarity:
            break
        if q.roots_only and hit.parent_id:
            continue
        out.append(NearestHit(hit.memory_id, hit.score, hit.parent_id or None))
        if len(out) >= limit:
            break
    return out
