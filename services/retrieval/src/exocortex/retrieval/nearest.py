"""Nearest neighbours over a whole namespace, for the write side (semantic dedup, relation
discovery, contradiction candidates). Only this process opens the vector index, so other
services ask here instead of scanning a window of recent rows."""

from __future__ import annotations

import asyncio

import numpy as np

from exocortex.core.domain.vectors import from_bytes
from exocortex.core.errors import InvalidArgument
from exocortex.indexes.base import IndexFilter, IndexHit, VectorIndex
from exocortex.proto.v1 import retrieval_pb2

MAX_QUERIES = 512
MAX_LIMIT = 200
# The most hits one lookup reads while looking for roots among chunks and variants.
MAX_FETCH = 1_000


async def nearest(
    index: VectorIndex, request: retrieval_pb2.NearestRequest
) -> retrieval_pb2.NearestResponse:
    if len(request.queries) > MAX_QUERIES:
        raise InvalidArgument(f"at most {MAX_QUERIES} queries per call", field="queries")
    limit = request.limit or 10
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")

    async def one(query: retrieval_pb2.NearestQuery) -> retrieval_pb2.NearestHits:
        vector = from_bytes(query.vector)
        if vector.size == 0 or not np.all(np.isfinite(vector)):
            raise InvalidArgument("vector must be non-empty finite float32s", field="vector")
        flt = IndexFilter(
            namespace=request.namespace or "default",
            content_type=request.content_type if request.HasField("content_type") else None,
            tags_any=tuple(request.tags),
            exclude_metadata=request.exclude_metadata,
            exclude_ids=tuple(query.exclude_ids),
        )
        fetch = limit * 3 if request.roots_only else limit
        while True:
            hits = await index.search(vector, fetch, flt)
            out = _hits(hits, request, limit)
            # Chunk and variant hits are dropped after the search when only roots are wanted,
            # so ask for more. A memory kept in many wordings (variants) can fill the first
            # hits on its own and push its own root out of them: then ask again, for more.
            done = (
                not request.roots_only
                or len(out.hits) >= limit
                or len(hits) < fetch
                or hits[-1].score < request.min_similarity
                or fetch >= MAX_FETCH
            )
            if done:
                return out
            fetch = min(fetch * 4, MAX_FETCH)

    results = await asyncio.gather(*(one(q) for q in request.queries))
    return retrieval_pb2.NearestResponse(results=results)


def _hits(
    hits: list[IndexHit], request: retrieval_pb2.NearestRequest, limit: int
) -> retrieval_pb2.NearestHits:
    out = retrieval_pb2.NearestHits()
    for hit in hits:
        if hit.score < request.min_similarity:
            break
        if request.roots_only and hit.parent_id:
            continue
        item = out.hits.add(memory_id=hit.memory_id, similarity=hit.score)
        if hit.parent_id:
            item.parent_id = hit.parent_id
        if len(out.hits) >= limit:
            break
    return out
