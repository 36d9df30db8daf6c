"""Hybrid search: dense and BM25 candidates over the whole namespace, fused with weighted RRF,
then boosted by recency, usage, valence, tags and the graph (each visible in the breakdown).

The hot path is: embed the query (cached) ∥ keyword search → vector search → fuse → one
hydration query and one graph query → score → page. Side effects (access counts, misses,
co-retrievals, impressions) are published as an event after answering, never awaited here.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core import scope
from exocortex.core.domain.tags import alias_map, expand_aliases
from exocortex.core.domain.text import strip_private
from exocortex.core.domain.vectors import Vector
from exocortex.core.errors import InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.core.repositories import memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import IndexFilter, IndexHit, KeywordIndex, VectorIndex
from exocortex.proto.v1 import retrieval_pb2
from exocortex.retrieval import (
    bounds,
    expansion,
    graph,
    metrics,
    neighbours,
    packing,
    scoring,
)
from exocortex.retrieval.fusion import (
    Fused,
    add_list,
    best_first,
    collapse_to_roots,
    fuse,
    rank_by_score,
)
from exocortex.retrieval.lru import LruCache, TtlCache
from exocortex.retrieval.priority import SearchActivity
from exocortex.retrieval.query_encoder import QueryEmbedder

log = get_logger(__name__)

Row = dict[str, Any]
T = TypeVar("T")

MAX_LIMIT = 100
MAX_QUERY_CHARS = 4_000
MAX_LINKED = 10
MIN_TOKENS, MAX_TOKENS = 100, 100_000
# max_tokens packs from this many ranked results (the seed's 50).
PACK_POOL = 50
# Seeds for graph proximity: the best fused candidates before boosts.
GRAPH_SEEDS = 20
# Rows read before any bound is applied: at least the seeds (whose liveness the neighbours need)
# and twice the page; the rest are read only if they can still reach the page.
HEAD_MIN = GRAPH_SEEDS


@dataclass
class ScoredMemory:
    row: Row
    score: float
    fused: Fused
    breakdown: dict[str, float] = field(default_factory=dict)
    preview: str = ""


@dataclass
class LinkedRow:
    row: Row
    link: graph.Link


@dataclass
class SearchOutcome:
    results: list[ScoredMemory]
    degraded: list[str]
    mode: str = "rrf"
    linked: list[LinkedRow] = field(default_factory=list)
    total: int = 0
    expansion_terms: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _ScoreContext:
    """What scoring a candidate needs beyond its row: fixed for the whole search."""

    terms: list[str]
    now: datetime
    max_access: int
    meta_wanted: bool
    best_fused: float
    best_keyword: float
    flt: IndexFilter
    # Results the page needs (offset included), for the bound on unread candidates.
    wanted: int


SearchListener = Callable[[retrieval_pb2.SearchRequest, SearchOutcome], None]


async def _timed(stage: str, awaitable: Awaitable[T]) -> T:
    start = time.perf_counter()
    try:
        return await awaitable
    finally:
        metrics.SEARCH_DURATION.labels(stage).observe(time.perf_counter() - start)


def validate(req: retrieval_pb2.SearchRequest) -> tuple[str, int]:
    # A private block in a query is never searched for, embedded or recorded as a miss.
    query = strip_private(req.query)
    if not query:
        if req.query.strip():
            raise InvalidArgument(
                "query is empty after removing <private> blocks; search for public text",
                field="query",
            )
        raise InvalidArgument("query must not be empty", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is longer than {MAX_QUERY_CHARS} characters", field="query")
    limit = req.limit or 10
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    if req.offset < 0:
        raise InvalidArgument("offset must not be negative", field="offset")
    if req.max_tokens and not MIN_TOKENS <= req.max_tokens <= MAX_TOKENS:
        raise InvalidArgument(
            f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}", field="max_tokens"
        )
    if not 0 <= req.linked_limit <= MAX_LINKED:
        raise InvalidArgument(f"linked_limit must be 0..{MAX_LINKED}", field="linked_limit")
    both = req.HasField("after") and req.HasField("before")
    if both and req.after.ToDatetime() >= req.before.ToDatetime():
        raise InvalidArgument("after must be earlier than before", field="after")
    return query, limit


class SearchService:
    def __init__(
        self,
        pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]],
        embedder: QueryEmbedder,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        settings_cache: SettingsCache,
        *,
        overfetch_factor: int,
        min_candidates: int,
        query_cache_size: int = 2048,
        listener: SearchListener | None = None,
        activity: SearchActivity | None = None,
    ) -> None:
        self._pool = pool
        self._embedder = embedder
        self._vector = vector_index
        self._keyword = keyword_index
        self._settings = settings_cache
        self._overfetch = overfetch_factor
        self._min_candidates = min_candidates
        # Agents repeat queries a lot; a cached query vector saves the embedding round trip.
        self._query_vectors: LruCache[str, Vector] = LruCache(query_cache_size)
        # The namespace's highest access count normalises frequency; it moves slowly. Keyed by
        # namespace; None is every namespace.
        self._max_access: TtlCache[str | None, int] = TtlCache(ttl_seconds=60.0)
        self._max_access_refreshing: set[str | None] = set()
        self._background: set[asyncio.Task[None]] = set()
        self.listener = listener
        # Searches running and recently ended, for background work to wait on (see priority).
        self.activity = activity or SearchActivity()

    def _filter(
        self,
        req: retrieval_pb2.SearchRequest,
        namespace: str | None,
        settings: dict[str, str],
        exclude_metadata: bool,
    ) -> IndexFilter:
        allowed = scope.current_scope()
        return IndexFilter(
            namespace=namespace,
            # No namespace named by a caller limited to several: any of theirs.
            namespaces_any=tuple(sorted(allowed)) if namespace is None and allowed else (),
            tags_any=tuple(expand_aliases(req.tags, alias_map(settings))) if req.tags else (),
            content_type=req.content_type if req.HasField("content_type") else None,
            source=req.source if req.HasField("source") else None,
            created_after=req.after.ToDatetime(tzinfo=UTC) if req.HasField("after") else None,
            created_before=req.before.ToDatetime(tzinfo=UTC) if req.HasField("before") else None,
            min_importance=req.min_importance if req.HasField("min_importance") else None,
            exclude_metadata=exclude_metadata,
        )

    async def search(self, req: retrieval_pb2.SearchRequest) -> SearchOutcome:
        with self.activity.searching():
            return await self._search(req)

    async def _search(self, req: retrieval_pb2.SearchRequest) -> SearchOutcome:
        started = time.perf_counter()
        query, limit = validate(req)
        settings = await self._settings.get()
        cfg = scoring.ScoringSettings.from_settings(settings)
        namespace = search_namespace(req.namespace)
        meta_wanted = scoring.wants_metadata(req.include_metadata, req.tags, query, cfg)
        flt = self._filter(
            req, namespace, settings, cfg.metadata_mode == "exclude" and not meta_wanted
        )
        page_size = max(limit, PACK_POOL) if req.max_tokens else limit
        wanted = req.offset + page_size
        candidates = max(self._min_candidates, wanted * self._overfetch)

        degraded: list[str] = []
        extra = strip_private(req.expanded_query)
        # The keyword search waits for the query vector (the expansion lookup in Postgres runs
        # beside the embedding): the embedding is the longest step before fusion, and on a few
        # cores the keyword search only slowed it down; after it, the keyword search runs
        # beside the vector search. Alternating runs at 100k: p50/p95 27.9/37.6 against
        # 31.1/43.8 ms (medians of four pairs).
        embedded = asyncio.Event()
        vector_task = asyncio.create_task(
            self._vector_hits(f"{query} {extra}" if extra else query, candidates, flt, embedded)
        )
        expansion_cfg = expansion.ExpansionSettings.from_settings(settings)
        keyword_task = asyncio.create_task(
            self._keyword_hits(namespace, query, extra, expansion_cfg, candidates, flt, embedded)
        )
        vector_hits: list[IndexHit] = []
        keyword_hits: list[IndexHit] = []
        expansion_terms: list[str] = []
        try:
            vector_hits = await vector_task
        except Exception as exc:
            log.warning("vector side unavailable; answering from keywords", error=str(exc))
            degraded.append("vector")
        try:
            keyword_hits, expansion_terms = await keyword_task
        except Exception as exc:
            log.warning("keyword index unavailable; answering from vectors", error=str(exc))
            degraded.append("keyword")

        lists = {
            "vector": collapse_to_roots([(h.memory_id, h.score, h.parent_id) for h in vector_hits]),
            "keyword": collapse_to_roots(
                [(h.memory_id, h.score, h.parent_id) for h in keyword_hits]
            ),
        }
        weights = {
            "vector": cfg.vector_weight,
            "keyword": cfg.fts_weight,
            "graph": cfg.graph_weight,
        }
        fused = fuse(lists, weights, cfg.rrf_k)
        ids = [f.memory_id for f in best_first(fused)]
        # RRF mode reads the best candidates' rows first and the rest only if they can still
        # reach the page (see bounds); the legacy score has no such bound, so it reads them all.
        head = ids[: max(HEAD_MIN, 2 * wanted)] if cfg.use_rrf else ids
        terms = scoring.query_terms(query)
        # Hydration, the graph query and the neighbours query are independent: they run on
        # their own connections at once. The graph sees every candidate.
        want_graph = cfg.graph_weight > 0 and bool(ids)
        near_cfg = neighbours.NeighbourSettings.from_settings(settings)
        want_near = cfg.use_rrf and near_cfg.enabled and bool(ids)
        rows, proximity, (near, near_vectors), max_access = await asyncio.gather(
            self._hydrate(head),
            self._proximity(namespace, ids, query) if want_graph else _nothing(),
            self._around(namespace, ids, near_cfg) if want_near else _no_neighbours(),
            self._namespace_max_access(namespace),
        )
        now = datetime.now(UTC)
        dead = {i for i in head if i not in rows or not _is_live(rows[i], now)}
        proximity = {i: v for i, v in proximity.items() if i not in dead}

        if proximity:
            # Ties in proximity keep the indexes' fused order (see rank_by_score). Added last
            # to the same fusion: the scores are those of fusing all three lists at once.
            add_list(fused, "graph", rank_by_score(proximity, ids), weights["graph"], cfg.rrf_k)
        found_by_index = [i for i in ids if i not in dead]
        added = (
            self._add_neighbours(near, near_vectors, fused, found_by_index, near_cfg)
            if near
            else []
        )
        pool = [fused[i] for i in found_by_index + added]
        ctx = _ScoreContext(
            terms=terms,
            now=now,
            max_access=max_access,
            meta_wanted=meta_wanted,
            best_fused=max((f.score for f in pool), default=0.0),
            best_keyword=max((f.raw_scores.get("keyword", 0.0) for f in pool), default=0.0),
            flt=flt,
            wanted=wanted,
        )
        scored, unread = await self._score_reachable(
            req, cfg, ctx, [f.memory_id for f in pool], set(added), fused, rows
        )
        metrics.SEARCH_ROWS.labels("candidate").inc(len(pool))
        metrics.SEARCH_ROWS.labels("read").inc(len(pool) - unread)
        scored.sort(key=lambda s: (-s.score, s.row["id"]))
        page = scored[req.offset : req.offset + page_size]
        if req.max_tokens:
            page = packing.pack(page, self._cost(req.compact), req.max_tokens)
        if req.compact:
            for item in page:
                item.preview = packing.preview(item.row["content"], query)

        outcome = SearchOutcome(
            results=page,
            degraded=degraded,
            mode="rrf" if cfg.use_rrf else "legacy",
            total=len(scored) + unread,
            expansion_terms=expansion_terms,
        )
        if req.linked_limit:
            outcome.linked = await self.linked([s.row["id"] for s in page], req.linked_limit)
        metrics.SEARCH_DURATION.labels("total").observe(time.perf_counter() - started)
        if self.listener is not None:
            self.listener(req, outcome)
        return outcome

    async def _hydrate(self, ids: list[str]) -> dict[str, Row]:
        """The rows, each with what the quality and goal signals need beyond it (read right
        after on the same connection: a second one a search would crowd the pool)."""
        async with self._pool.connection() as conn:
            rows = await _timed("hydrate", memories.get_many(conn, ids))
            more = await _timed(
                "extras",
                graph.extras(conn, list(rows), scoring.GOAL_EXPLICIT, scoring.GOAL_IMPLICIT),
            )
        for memory_id, row in rows.items():
            found = more.get(memory_id)
            row[scoring.LINK_COUNT] = found.links if found else 0
            row[scoring.GOAL_LINK] = found.goal if found else 0.0
        return rows

    async def _proximity(
        self, namespace: str | None, ids: list[str], query: str
    ) -> dict[str, float]:
        async with self._pool.connection() as conn:
            return await _timed(
                "graph", graph.proximity(conn, namespace, ids, ids[:GRAPH_SEEDS], query)
            )

    async def _around(
        self, namespace: str | None, ids: list[str], cfg: neighbours.NeighbourSettings
    ) -> tuple[neighbours.Found, dict[str, Vector]]:
        """The top candidates' arrival neighbours (and their vectors, when coherence is
        asked)."""
        async with self._pool.connection() as conn:
            found = await _timed(
                "neighbours", neighbours.around(conn, namespace, ids[:GRAPH_SEEDS], cfg)
            )
            if not cfg.coherence_full or not found:
                return found, {}
            return found, await _timed("neighbour_vectors", neighbours.vectors(conn, found))

    @staticmethod
    def _add_neighbours(
        near: neighbours.Found,
        near_vectors: dict[str, Vector],
        fused: dict[str, Fused],
        found_by_index: list[str],
        cfg: neighbours.NeighbourSettings,
    ) -> list[str]:
        """Pass the live seeds' scores on to their neighbours (``neighbours``), scaled by the
        coherence that shows arrival order means something here; returns the neighbours the
        indexes did not find (new candidates, checked against the filters once their rows are
        read)."""
        alive = set(found_by_index)
        if cfg.weight <= 0:
            return []
        shares: dict[str, float] | None = None
        if cfg.coherence_full:
            alike = neighbours.coherence(near, near_vectors)
            shares = {seed: min(1.0, alike.of(seed) / cfg.coherence_full) for seed in near}
        # Every credit is worked out from the scores the indexes gave, before any is added.
        seed_scores = {i: fused[i].score for i in near if i in alive and i in fused}
        added: list[str] = []
        credits = neighbours.bonuses(near, seed_scores, cfg.weight, shares)
        for memory_id, credit in credits.items():
            entry = fused.get(memory_id)
            if entry is None:
                entry = fused[memory_id] = Fused(memory_id)
            score = neighbours.lifted(entry.score, credit)
            if score <= entry.score:
                continue  # already past its ceiling on its own
            if memory_id not in alive:
                added.append(memory_id)
            entry.raw_scores["neighbour"] = score - entry.score
            entry.score = score
        return added

    async def _score_reachable(
        self,
        req: retrieval_pb2.SearchRequest,
        cfg: scoring.ScoringSettings,
        ctx: _ScoreContext,
        candidates: list[str],
        neighbour_only: set[str],
        fused: dict[str, Fused],
        rows: dict[str, Row],
    ) -> tuple[list[ScoredMemory], int]:
        """Score the candidates whose rows are read; read more, best first, while an unread
        candidate can still reach the page (all of them in legacy mode). Returns the scored
        results and how many candidates were never read."""
        pending = [i for i in candidates if i not in rows]
        ready = [i for i in candidates if i in rows]
        scored: list[ScoredMemory] = []
        while True:
            usable = [
                fused[i]
                for i in ready
                if i in rows
                and (
                    neighbours.passes(rows[i], ctx.flt, ctx.now)
                    if i in neighbour_only
                    else _is_live(rows[i], ctx.now)
                )
            ]
            scored += self._score(req, cfg, usable, rows, ctx)
            if not pending:
                return scored, 0
            floor = None
            if cfg.use_rrf and len(scored) >= ctx.wanted:
                floor = heapq.nlargest(ctx.wanted, (s.score for s in scored))[-1]
            need = (
                bounds.reachable(pending, fused, floor, ctx.best_fused, cfg)
                if cfg.use_rrf
                else pending
            )
            if not need:
                return scored, len(pending)
            rows.update(await self._hydrate(need))
            ready, asked = need, set(need)
            pending = [i for i in pending if i not in asked]

    async def _namespace_max_access(self, namespace: str | None) -> int:
        cached = self._max_access.peek(namespace)
        if cached is None:
            return await self._read_max_access(namespace)
        value, fresh = cached
        if not fresh and namespace not in self._max_access_refreshing:
            # It reads every used memory (200-300 ms at 100k): a search answers with the
            # last value and the refresh runs beside it, instead of one search a minute
            # waiting for it.
            self._max_access_refreshing.add(namespace)
            task = asyncio.create_task(self._refresh_max_access(namespace))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return value

    async def _refresh_max_access(self, namespace: str | None) -> None:
        try:
            await self._read_max_access(namespace)
        except Exception as exc:
            log.warning("max access refresh failed; the last value stays", error=str(exc))
        finally:
            self._max_access_refreshing.discard(namespace)

    async def _read_max_access(self, namespace: str | None) -> int:
        async with self._pool.connection() as conn:
            value = await graph.max_access(conn, namespace)
        self._max_access.put(namespace, value)
        return value

    @staticmethod
    def _cost(compact: bool) -> Callable[[ScoredMemory], int]:
        if compact:
            return lambda s: (
                packing.COMPACT_OVERHEAD_TOKENS
                + packing.estimate_tokens(s.row["content"][: packing.PREVIEW_CHARS])
            )
        return lambda s: packing.RESULT_OVERHEAD_TOKENS + packing.estimate_tokens(s.row["content"])

    def _score(
        self,
        req: retrieval_pb2.SearchRequest,
        cfg: scoring.ScoringSettings,
        fused: list[Fused],
        rows: dict[str, Row],
        ctx: _ScoreContext,
    ) -> list[ScoredMemory]:
        best_fused, best_keyword = ctx.best_fused, ctx.best_keyword
        if req.HasField("min_score"):
            threshold = req.min_score
        else:
            threshold = 0.0 if cfg.use_rrf else cfg.legacy_min_score
        out: list[ScoredMemory] = []
        for entry in fused:
            row = rows[entry.memory_id]
            sig = scoring.signals(
                row, now=ctx.now, terms=ctx.terms, max_access=ctx.max_access, cfg=cfg
            )
            graph_score = entry.raw_scores.get("graph", 0.0)
            if cfg.use_rrf:
                boost = scoring.boost_multiplier(sig, cfg)
                score = entry.score * boost + (cfg.tag_boost * best_fused if sig.tag else 0.0)
            else:
                boost = 1.0
                keyword_norm = (
                    entry.raw_scores.get("keyword", 0.0) / best_keyword if best_keyword > 0 else 0.0
                )
                score = scoring.legacy_score(
                    entry.raw_scores.get("vector", 0.0), keyword_norm, graph_score, sig, cfg
                )
            penalize = (
                cfg.metadata_mode == "penalize" and bool(row["is_metadata"]) and not ctx.meta_wanted
            )
            factor = cfg.metadata_penalty if penalize else 1.0
            score *= factor
            if score < threshold:
                continue
            out.append(
                ScoredMemory(
                    row=row,
                    score=score,
                    fused=entry,
                    breakdown={
                        "recency": sig.recency,
                        "frequency": sig.frequency,
                        "usefulness": sig.usefulness,
                        "valence": sig.valence,
                        "tag": sig.tag,
                        "quality": sig.quality,
                        "goal_relevance": sig.goal,
                        "graph": graph_score,
                        "neighbour": entry.raw_scores.get("neighbour", 0.0),
                        "metadata_penalty": factor,
                        "boost": boost,
                    },
                )
            )
        return out

    async def linked(self, result_ids: list[str], limit: int) -> list[LinkedRow]:
        if not result_ids or limit <= 0:
            return []
        async with self._pool.connection() as conn:
            links = await graph.linked(conn, result_ids, limit)
            rows = await memories.get_many(conn, [link.memory_id for link in links])
        return [LinkedRow(rows[x.memory_id], x) for x in links if x.memory_id in rows]

    async def _keyword_hits(
        self,
        namespace: str | None,
        query: str,
        extra: str,
        cfg: expansion.ExpansionSettings,
        limit: int,
        flt: IndexFilter,
        embedded: asyncio.Event,
    ) -> tuple[list[IndexHit], list[str]]:
        """Keyword hits for the query, the caller's extra text and the expansion terms (which
        are returned too, so the reply can show them); searched once `embedded` is set."""
        terms: list[str] = []
        if cfg.enabled:
            try:
                async with self._pool.connection() as conn:
                    terms = await _timed("expand", expansion.expand(conn, namespace, query, cfg))
            except Exception as exc:  # expansion only adds recall; never fail a search on it
                log.warning("query expansion failed; searching without it", error=str(exc))
        text = " ".join(part for part in (query, extra, *terms) if part)
        await embedded.wait()
        hits = await _timed("keyword", self._keyword.search(text, limit, flt))
        return hits, terms

    async def _vector_hits(
        self, query: str, limit: int, flt: IndexFilter, embedded: asyncio.Event
    ) -> list[IndexHit]:
        """Vector hits for the query; sets `embedded` once the query vector is known or
        cannot be had (the keyword side must not wait for a failed embedding)."""
        try:
            vector = self._query_vectors.get(query)
            if vector is None:
                vector = (await _timed("embed", self._embedder.embed([query], query=True)))[0]
                self._query_vectors.put(query, vector)
        finally:
            embedded.set()
        return await _timed("vector", self._vector.search(vector, limit, flt))


def search_namespace(requested: str) -> str | None:
    """The namespace a search keeps to: the one named (which the caller's scope must allow),
    else the caller's only namespace, else None (every namespace the caller may see: the index
    filter then lists them)."""
    if requested:
        return scope.require(requested)
    allowed = scope.current_scope()
    if allowed is not None and len(allowed) == 1:
        return next(iter(allowed))
    return None


async def _nothing() -> dict[str, float]:
    return {}


async def _no_neighbours() -> tuple[neighbours.Found, dict[str, Vector]]:
    return {}, {}


def _is_live(row: Row, now: datetime) -> bool:
    expires = row.get("expires_at")
    return bool(row["is_active"]) and (expires is None or expires > now)
