"""Candidates from the two indexes: the query's vector hits (with its embedding cached) and its
keyword hits, widened by query expansion."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from exocortex.core.db.pool import Pool
from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.indexes.base import (
    DEFAULT_KEYWORDS_BOOST,
    IndexFilter,
    IndexHit,
    KeywordIndex,
    VectorIndex,
    best_first,
)
from exocortex.retrieval import metrics
from exocortex.retrieval.search import expansion, repository
from exocortex.retrieval.search.query_encoder import QueryEmbedder
from exocortex.retrieval.search.query_vectors import QueryVectors, model_key

log = get_logger(__name__)


class IndexHits:
    def __init__(
        self,
        pool: Pool,
        embedder: QueryEmbedder,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        query_cache_size: int,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._vector = vector_index
        self._keyword = keyword_index
        # Agents repeat queries a lot; a kept query vector saves its embedding.
        self._query_vectors = QueryVectors(query_cache_size)

    async def keyword(
        self,
        namespace: str | None,
        query: str,
        extra: str,
        cfg: expansion.ExpansionSettings,
        limit: int,
        flt: IndexFilter,
        embedded: asyncio.Event,
        keywords_boost: float = DEFAULT_KEYWORDS_BOOST,
    ) -> tuple[list[IndexHit], list[str]]:
        """Keyword hits for the query, the caller's extra text and the expansion terms (which
        are returned too, so the reply can show them); searched once `embedded` is set."""
        terms: list[str] = []
        if cfg.enabled:
            try:
                terms = await metrics.timed("expand", self._expansion(namespace, query, cfg))
            except Exception as exc:  # expansion only adds recall; never fail a search on it
                log.warning("query expansion failed; searching without it", error=str(exc))
        text = " ".join(part for part in (query, extra, *terms) if part)
        await embedded.wait()
        search = self._keyword.search(text, limit, flt, keywords_boost=keywords_boost)
        hits = await metrics.timed("keyword", search)
        return best_first(hits), terms

    async def _expansion(
        self, namespace: str | None, query: str, cfg: expansion.ExpansionSettings
    ) -> list[str]:
        if cfg.max_terms == 0:
            return []
        async with self._pool.connection() as conn:
            entity_terms = await repository.entity_terms(conn, namespace, query)
        return expansion.expand(query, entity_terms, cfg)

    async def vector(
        self,
        query: str,
        limit: int,
        flt: IndexFilter,
        embedded: asyncio.Event,
        settings: Mapping[str, str],
    ) -> tuple[list[IndexHit], Vector]:
        """Vector hits for the query, and its vector; sets `embedded` once the query vector is
        known or cannot be had (the keyword side must not wait for a failed embedding)."""
        try:
            vector = self._query_vectors.get(model_key(self._embedder, settings), query)
            if vector is None:
                embedded_now = metrics.timed("embed", self._embedder.embed([query], query=True))
                vector = (await embedded_now)[0]
                # Keyed after embedding: the service's client learns its model from the reply.
                self._query_vectors.put(model_key(self._embedder, settings), query, vector)
        finally:
            embedded.set()
        hits = await metrics.timed("vector", self._vector.search(vector, limit, flt))
        return best_first(hits), vector
