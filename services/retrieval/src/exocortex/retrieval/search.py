"""Hybrid search: dense and BM25 candidates over the whole namespace, fused with RRF."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.domain.tags import alias_map, expand_aliases
from exocortex.core.errors import InvalidArgument
from exocortex.core.indexes.base import IndexFilter, IndexHit, KeywordIndex, VectorIndex
from exocortex.core.logging import get_logger
from exocortex.core.repositories import memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.proto.v1 import retrieval_pb2
from exocortex.retrieval import metrics
from exocortex.retrieval.fusion import Fused, collapse_to_roots, rrf

log = get_logger(__name__)

Row = dict[str, Any]
T = TypeVar("T")

MAX_LIMIT = 100
MAX_QUERY_CHARS = 4_000


def _float(settings: dict[str, str], key: str, default: float) -> float:
    try:
        return float(settings.get(key, default))
    except ValueError:
        return default


@dataclass
class ScoredMemory:
    row: Row
    score: float
    fused: Fused
    breakdown: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchOutcome:
    results: list[ScoredMemory]
    degraded: list[str]
    mode: str = "rrf"


async def _timed(stage: str, awaitable: Awaitable[T]) -> T:
    start = time.perf_counter()
    try:
        return await awaitable
    finally:
        metrics.SEARCH_DURATION.labels(stage).observe(time.perf_counter() - start)


class SearchService:
    def __init__(
        self,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]],
        embedder: EmbeddingClient,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        settings_cache: SettingsCache,
        *,
        overfetch_factor: int,
        min_candidates: int,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._vector = vector_index
        self._keyword = keyword_index
        self._settings = settings_cache
        self._overfetch = overfetch_factor
        self._min_candidates = min_candidates

    def _filter(self, req: retrieval_pb2.SearchRequest, settings: dict[str, str]) -> IndexFilter:
        metadata_mode = settings.get("search.metadata_mode", "penalize")
        return IndexFilter(
            namespace=req.namespace or "default",
            tags_any=tuple(expand_aliases(req.tags, alias_map(settings))) if req.tags else (),
            content_type=req.content_type if req.HasField("content_type") else None,
            source=req.source if req.HasField("source") else None,
            created_after=req.after.ToDatetime(tzinfo=UTC) if req.HasField("after") else None,
            created_before=req.before.ToDatetime(tzinfo=UTC) if req.HasField("before") else None,
            min_importance=req.min_importance if req.HasField("min_importance") else None,
            exclude_metadata=metadata_mode == "exclude" and not req.include_metadata,
        )

    async def search(self, req: retrieval_pb2.SearchRequest) -> SearchOutcome:
        started = time.perf_counter()
        query = req.query.strip()
        if not query:
            raise InvalidArgument("query must not be empty", field="query")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidArgument(
                f"query is longer than {MAX_QUERY_CHARS} characters", field="query"
            )
        limit = req.limit or 10
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
        if req.offset < 0:
            raise InvalidArgument("offset must not be negative", field="offset")
        settings = await self._settings.get()
        flt = self._filter(req, settings)
        wanted = req.offset + limit
        candidates = max(self._min_candidates, wanted * self._overfetch)

        degraded: list[str] = []
        vector_task = asyncio.create_task(self._vector_hits(query, candidates, flt))
        keyword_task = asyncio.create_task(
            _timed("keyword", self._keyword.search(query, candidates, flt))
        )
        vector_hits: list[IndexHit] = []
        keyword_hits: list[IndexHit] = []
        try:
            vector_hits = await vector_task
        except Exception as exc:
            log.warning("vector side unavailable; answering from keywords", error=str(exc))
            degraded.append("vector")
        try:
            keyword_hits = await keyword_task
        except Exception as exc:
            log.warning("keyword index unavailable; answering from vectors", error=str(exc))
            degraded.append("keyword")

        fuse_start = time.perf_counter()
        k = _float(settings, "scoring.rrf_k", 60.0)
        weights = {
            "vector": _float(settings, "scoring.vector_weight", 0.45),
            "keyword": _float(settings, "scoring.fts_weight", 0.25),
        }
        fused = rrf(
            {
                "vector": collapse_to_roots(
                    [(h.memory_id, h.score, h.parent_id) for h in vector_hits]
                ),
                "keyword": collapse_to_roots(
                    [(h.memory_id, h.score, h.parent_id) for h in keyword_hits]
                ),
            },
            weights,
            k,
        )
        metrics.SEARCH_DURATION.labels("fuse").observe(time.perf_counter() - fuse_start)

        # Hydrate a margin beyond the page: rows may have become inactive since indexing.
        head = fused[: wanted + limit]
        async with self._pool.connection() as conn:
            rows = await _timed("hydrate", memories.get_many(conn, [f.memory_id for f in head]))
        penalty = _float(settings, "search.metadata_penalty", 0.35)
        penalize = settings.get("search.metadata_mode", "penalize") == "penalize"
        min_score = req.min_score if req.HasField("min_score") else 0.0
        scored: list[ScoredMemory] = []
        for entry in head:
            row = rows.get(entry.memory_id)
            if row is None or not row["is_active"]:
                continue
            score = entry.score
            metadata_factor = (
                penalty if (penalize and row["is_metadata"] and not req.include_metadata) else 1.0
            )
            score *= metadata_factor
            if score < min_score:
                continue
            scored.append(
                ScoredMemory(
                    row=row,
                    score=score,
                    fused=entry,
                    breakdown={"metadata_penalty": metadata_factor},
                )
            )
        scored.sort(key=lambda s: (-s.score, s.row["id"]))
        page = scored[req.offset : req.offset + limit]
        metrics.SEARCH_DURATION.labels("total").observe(time.perf_counter() - started)
        return SearchOutcome(results=page, degraded=degraded)

    async def _vector_hits(self, query: str, limit: int, flt: IndexFilter) -> list[IndexHit]:
        vectors = await _timed("embed", self._embedder.embed([query], query=True))
        return await _timed("vector", self._vector.search(vectors[0], limit, flt))
