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
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime

from exocortex.core.db.pool import Pool
from exocortex.core.domain.text import strip_private
from exocortex.core.domain.token_vectors import Packed, packed
from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.core.repositories import memories
from exocortex.core.settings_cache import SettingsCache
from exocortex.indexes.base import IndexFilter, IndexHit, KeywordIndex, VectorIndex
from exocortex.indexes.base import best_first as best_first_hits
from exocortex.retrieval import metrics
from exocortex.retrieval.search import (
    bounds,
    context,
    coverage,
    dated,
    expansion,
    feedback,
    hops,
    neighbours,
    packing,
    ranking,
    repository,
    rerank,
    scoring,
)
from exocortex.retrieval.search.fusion import (
    Fused,
    add_list,
    best_first,
    collapse_to_roots,
    fuse,
    rank_by_score,
)
from exocortex.retrieval.search.hits import IndexHits
from exocortex.retrieval.search.lru import LruCache
from exocortex.retrieval.search.max_access import MaxAccess
from exocortex.retrieval.search.priority import SearchActivity
from exocortex.retrieval.search.query import (
    SearchQuery,
    index_filter,
    search_namespace,
    validate,
)
from exocortex.retrieval.search.query_encoder import QueryEmbedder
from exocortex.retrieval.search.results import (
    Candidate,
    LinkedMemory,
    ScoredMemory,
    SearchOutcome,
)
from exocortex.retrieval.search.stored_vectors import DEFAULT_BYTES as DEFAULT_VECTOR_BYTES
from exocortex.retrieval.search.stored_vectors import StoredVectors

log = get_logger(__name__)

# max_tokens packs from this many ranked results (the seed's 50).
PACK_POOL = 50
# Seeds for graph proximity: the best fused candidates before boosts.
GRAPH_SEEDS = 20
# Rows read before any bound is applied: at least the seeds (whose liveness the neighbours need)
# and twice the page; the rest are read only if they can still reach the page.
HEAD_MIN = GRAPH_SEEDS
# The token vectors kept for re-scoring: a byte budget (see EXO_RETRIEVAL_TOKEN_CACHE_MB), and
# a bound on the entries so a store of tiny memories cannot make the bookkeeping the cost.
DEFAULT_TOKEN_CACHE_BYTES = 128 * 2**20
TOKEN_ENTRIES_MAX = 65_536

SearchListener = Callable[[SearchQuery, SearchOutcome], None]


class SearchService:
    def __init__(
        self,
        pool: Pool,
        embedder: QueryEmbedder,
        vector_index: VectorIndex,
        keyword_index: KeywordIndex,
        settings_cache: SettingsCache,
        *,
        overfetch_factor: int,
        min_candidates: int,
        query_cache_size: int = 2048,
        token_cache_bytes: int = DEFAULT_TOKEN_CACHE_BYTES,
        vector_cache_bytes: int = DEFAULT_VECTOR_BYTES,
        listener: SearchListener | None = None,
        activity: SearchActivity | None = None,
    ) -> None:
        self._pool = pool
        self._settings = settings_cache
        self._overfetch = overfetch_factor
        self._min_candidates = min_candidates
        self._hits = IndexHits(pool, embedder, vector_index, keyword_index, query_cache_size)
        self._vector_index = vector_index
        self._embedder = embedder
        # Token vectors of memories for re-scoring, by (id, version): a changed memory is
        # encoded again. Kept packed (int8, about 12 KB at 30 tokens), within a byte budget.
        self._tokens: LruCache[tuple[str, int], Packed] = LruCache(
            TOKEN_ENTRIES_MAX, max_weight=token_cache_bytes, weigh=_packed_bytes
        )
        # The version each of those is kept at, by id: what a search can check before it has
        # read the rows (see _prefetch_tokens). An entry outliving its tokens only costs a read.
        self._token_versions: LruCache[str, int] = LruCache(TOKEN_ENTRIES_MAX)
        self._max_access = MaxAccess(pool)
        # The arrival neighbours' stored vectors, by id and version (see stored_vectors).
        self._stored_vectors = StoredVectors(vector_cache_bytes)
        self.listener = listener
        # Searches running and recently ended, for background work to wait on (see priority).
        self.activity = activity or SearchActivity()

    async def search(self, q: SearchQuery) -> SearchOutcome:
        with self.activity.searching():
            return await self._search(q)

    async def _search(self, q: SearchQuery) -> SearchOutcome:
        started = time.perf_counter()
        query, limit = validate(q)
        settings = await self._settings.get()
        cfg = scoring.ScoringSettings.from_settings(settings)
        namespace = search_namespace(q.namespace)
        meta_wanted = scoring.wants_metadata(q.include_metadata, q.tags, query, cfg)
        flt = index_filter(
            q, namespace, settings, cfg.metadata_mode == "exclude" and not meta_wanted
        )
        page_size = max(limit, PACK_POOL) if q.max_tokens else limit
        wanted = q.offset + page_size
        candidates = max(self._min_candidates, wanted * self._overfetch)

        degraded: list[str] = []
        extra = strip_private(q.expanded_query)
        # The keyword search waits for the query vector (the expansion lookup in Postgres runs
        # beside the embedding): the embedding is the longest step before fusion, and on a few
        # cores the keyword search only slowed it down; after it, the keyword search runs
        # beside the vector search. Alternating runs at 100k: p50/p95 27.9/37.6 against
        # 31.1/43.8 ms (medians of four pairs).
        embedded = asyncio.Event()
        vector_task = asyncio.create_task(
            self._vector_leg(
                f"{query} {extra}" if extra else query,
                candidates,
                flt,
                embedded,
                cfg.context_weight,
                settings,
            )
        )
        expansion_cfg = expansion.ExpansionSettings.from_settings(settings)
        keyword_task = asyncio.create_task(
            self._hits.keyword(
                namespace,
                query,
                extra,
                expansion_cfg,
                candidates,
                flt,
                embedded,
                keywords_boost=cfg.keyword_boost,
            )
        )
        vector_roots: list[tuple[str, float]] = []
        query_vector: Vector | None = None
        keyword_hits: list[IndexHit] = []
        expansion_terms: list[str] = []
        try:
            vector_roots, query_vector = await vector_task
        except Exception as exc:
            log.warning("vector side unavailable; answering from keywords", error=str(exc))
            degraded.append("vector")
        try:
            keyword_hits, expansion_terms = await keyword_task
        except Exception as exc:
            log.warning("keyword index unavailable; answering from vectors", error=str(exc))
            degraded.append("keyword")

        lists = {
            "vector": vector_roots,
            "keyword": _roots(keyword_hits),
        }
        weights = {
            "vector": cfg.vector_weight,
            "keyword": cfg.fts_weight,
            "graph": cfg.graph_weight,
        }
        fused = fuse(lists, weights, cfg.rrf_k)
        ids = [f.memory_id for f in best_first(fused)]
        rerank_cfg = rerank.RerankSettings.from_settings(settings)
        prefetched = self._prefetch_tokens(ids, rerank_cfg)
        # RRF mode reads the best candidates' rows first and the rest only if they can still
        # reach the page (see bounds); the legacy score has no such bound, so it reads them all.
        head = ids[: max(HEAD_MIN, 2 * wanted)] if cfg.use_rrf else ids
        terms = scoring.query_terms(query)
        # Hydration, the graph query and the neighbours query are independent: they run on
        # their own connections at once. The graph sees every candidate.
        want_graph = cfg.graph_weight > 0 and bool(ids)
        near_cfg = neighbours.NeighbourSettings.from_settings(settings)
        want_near = cfg.use_rrf and near_cfg.enabled and bool(ids)
        hop_cfg = hops.HopSettings.from_settings(settings)
        hop_seeds = ids[: hop_cfg.seeds] if cfg.use_rrf and hop_cfg.enabled else []
        feedback_cfg = feedback.FeedbackSettings.from_settings(settings)
        want_feedback = cfg.use_rrf and feedback_cfg.enabled
        (
            rows,
            proximity,
            (near, near_vectors),
            one_hop,
            feedback_roots,
            max_access,
        ) = await asyncio.gather(
            self._hydrate(head),
            self._proximity(namespace, ids, query) if want_graph else _nothing(),
            self._around(namespace, ids, near_cfg) if want_near else _no_neighbours(),
            self._one_hop(namespace, hop_seeds) if hop_seeds else _no_hops(),
            self._feedback(ids, query_vector, candidates, flt, feedback_cfg)
            if want_feedback and query_vector is not None
            else _no_roots(),
            self._max_access.get(namespace),
        )
        now = datetime.now(UTC)
        dead = {i for i in head if i not in rows or not rows[i].memory.is_live(now)}
        proximity = {i: v for i, v in proximity.items() if i not in dead}

        if proximity:
            # Ties in proximity keep the indexes' fused order (see rank_by_score). Added last
            # to the same fusion: the scores are those of fusing all three lists at once.
            add_list(fused, "graph", rank_by_score(proximity, ids), weights["graph"], cfg.rrf_k)
        if feedback_roots:
            # Fused last, as the graph list: memories only it found join the candidates (the
            # vector index applied the search's filters; their rows are read if they can still
            # reach the page).
            known = set(fused)
            add_list(fused, "feedback", feedback_roots, feedback_cfg.weight, cfg.rrf_k)
            ids += [i for i, _ in feedback_roots if i not in known]
        found_by_index = [i for i in ids if i not in dead]
        # The seeds' scores as the indexes and the graph gave them, before any credit.
        hop_scores = {i: fused[i].score for i in hop_seeds if i not in dead}
        added = (
            ranking.add_neighbours(near, near_vectors, fused, found_by_index, near_cfg)
            if near
            else []
        )
        if one_hop:
            added += ranking.add_hops(one_hop, hop_scores, fused, hop_cfg)
        pool = [fused[i] for i in found_by_index + added]
        ctx = ranking.ScoreContext(
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
            q, cfg, ctx, [f.memory_id for f in pool], set(added), fused, rows
        )
        metrics.SEARCH_ROWS.labels("candidate").inc(len(pool))
        metrics.SEARCH_ROWS.labels("read").inc(len(pool) - unread)
        scored.sort(key=lambda s: (-s.score, s.memory.id))
        if rerank_cfg.enabled and len(scored) > 1:
            scored = await self._reranked(query, scored, rerank_cfg, prefetched)
        scored = dated.dated_first(query, scored, dated.weight(settings))
        coverage_cfg = coverage.CoverageSettings.from_settings(settings)
        if coverage_cfg.enabled and len(scored) > 1:
            scored = await metrics.timed(
                "coverage", coverage.diversified(self._pool, scored, near_vectors, coverage_cfg)
            )
        page = scored[q.offset : q.offset + page_size]
        if q.max_tokens:
            page = packing.pack(page, self._cost(q.compact), q.max_tokens)
        if q.compact:
            for item in page:
                item.preview = packing.preview(item.memory.content, query)

        outcome = SearchOutcome(
            results=page,
            degraded=degraded,
            mode="rrf" if cfg.use_rrf else "legacy",
            total=len(scored) + unread,
            expansion_terms=expansion_terms,
        )
        if q.linked_limit:
            outcome.linked = await self.linked([s.memory.id for s in page], q.linked_limit)
        metrics.SEARCH_DURATION.labels("total").observe(time.perf_counter() - started)
        if self.listener is not None:
            self.listener(q, outcome)
        return outcome

    async def _vector_leg(
        self,
        text: str,
        limit: int,
        flt: IndexFilter,
        embedded: asyncio.Event,
        context_weight: float,
        settings: Mapping[str, str],
    ) -> tuple[list[tuple[str, float]], Vector]:
        """The vector index's roots for ``text``, re-ranked with their contextual vectors (see
        ``context``; read beside the keyword search), and the query's vector."""
        hits, query_vector = await self._hits.vector(text, limit, flt, embedded, settings)
        roots = _roots(hits)
        if context_weight <= 0 or not roots:
            return roots, query_vector
        try:
            async with self._pool.connection() as conn:
                contexts = await metrics.timed(
                    "context", repository.context_vectors(conn, [r for r, _ in roots])
                )
        except Exception as exc:  # context only reorders the leg; never fail a search on it
            log.warning("contextual vectors unavailable; vector order kept", error=str(exc))
            return roots, query_vector
        return context.rerank(roots, contexts, query_vector, context_weight), query_vector

    def _prefetch_tokens(
        self, ids: list[str], cfg: rerank.RerankSettings
    ) -> asyncio.Task[dict[str, Packed]] | None:
        """The stored token vectors of the best fused candidates not kept in memory, read while
        the rows are (the head after scoring is mostly among them; the rest is read after)."""
        if not cfg.enabled or getattr(self._embedder, "tokens", None) is None:
            return None
        wanted = [i for i in ids[: cfg.candidates] if self._token_versions.get(i) is None]
        if not wanted:
            return None
        return asyncio.create_task(self._stored_tokens(wanted))

    async def _reranked(
        self,
        query: str,
        scored: list[ScoredMemory],
        cfg: rerank.RerankSettings,
        prefetched: asyncio.Task[dict[str, Packed]] | None = None,
    ) -> list[ScoredMemory]:
        """``scored`` with its head ordered again by late interaction (see ``rerank``); as it
        was when the query encoder cannot give token vectors. The head's token vectors come
        from memory, else from those stored with each memory when it was embedded (those of
        the best fused candidates read beside the rows, the rest in one statement here), else
        (memories stored before they were kept) they are encoded here."""
        tokens_of = getattr(self._embedder, "tokens", None)
        if tokens_of is None:
            return scored
        head = scored[: cfg.candidates]
        found: dict[str, Packed] = {}
        for item in head:
            kept = self._tokens.get((item.memory.id, item.memory.version))
            if kept is not None:
                found[item.memory.id] = kept
        metrics.RERANK_TOKENS.labels("cached").inc(len(found))
        unread = [s for s in head if s.memory.id not in found]
        stored = await prefetched if prefetched is not None else {}
        query_tokens, more = await asyncio.gather(
            self._query_tokens(query, tokens_of),
            self._stored_tokens([s.memory.id for s in unread if s.memory.id not in stored]),
        )
        stored |= more
        if query_tokens is None:
            return scored
        missing = [s for s in unread if s.memory.id not in stored]
        metrics.RERANK_TOKENS.labels("stored").inc(len(unread) - len(missing))
        encoded: list[Packed] = []
        if missing:
            made = (
                await metrics.timed("rerank", tokens_of([s.memory.content for s in missing])) or []
            )
            encoded = [packed(tokens) for tokens in made]
            metrics.RERANK_TOKENS.labels("encoded").inc(len(encoded))
        for item, tokens in [
            *((s, stored[s.memory.id]) for s in unread if s.memory.id in stored),
            *zip(missing, encoded, strict=False),
        ]:
            self._tokens.put((item.memory.id, item.memory.version), tokens)
            self._token_versions.put(item.memory.id, item.memory.version)
            found[item.memory.id] = tokens
        similarity = {
            memory_id: rerank.maxsim(query_tokens, tokens) for memory_id, tokens in found.items()
        }
        order = rerank.reorder([s.memory.id for s in head], similarity, cfg.weight)
        by_id = {s.memory.id: s for s in head}
        # The head's scores, best first, handed out in the new order: results stay sorted.
        scores = [s.score for s in head]
        for memory_id, score in zip(order, scores, strict=True):
            by_id[memory_id].score = score
        return [by_id[i] for i in order] + scored[cfg.candidates :]

    async def _query_tokens(
        self, query: str, tokens_of: Callable[[list[str]], Awaitable[list[rerank.Tokens] | None]]
    ) -> rerank.Tokens | None:
        """The query's token vectors: those the query encoder kept from the run that made the
        query's vector, else encoded now."""
        kept_of = getattr(self._embedder, "query_tokens", None)
        kept = kept_of(query) if kept_of is not None else None
        if kept is not None:
            return kept  # type: ignore[no-any-return]
        got = await metrics.timed("rerank_query", tokens_of([query]))
        return got[0] if got else None

    async def _stored_tokens(self, ids: list[str]) -> dict[str, Packed]:
        """The token vectors stored with the memories ``ids`` for the model this process runs
        (one statement); none when they cannot be read (those memories are then encoded)."""
        model = getattr(getattr(self._embedder, "info", None), "fingerprint", "")
        if not ids or not model:
            return {}
        try:
            async with self._pool.connection() as conn:
                return await metrics.timed(
                    "rerank_read", repository.stored_tokens(conn, ids, model)
                )
        except Exception as exc:  # re-scoring only reorders the head; never fail a search
            log.warning("stored token vectors unavailable; encoding the head", error=str(exc))
            return {}

    async def _hydrate(self, ids: list[str]) -> dict[str, Candidate]:
        """The rows, each with what the quality and goal signals need beyond it (one
        statement)."""
        async with self._pool.connection() as conn:
            rows = await metrics.timed(
                "hydrate",
                repository.records(conn, ids, scoring.GOAL_EXPLICIT, scoring.GOAL_IMPLICIT),
            )
        return {i: Candidate(memory, more) for i, (memory, more) in rows.items()}

    async def _proximity(
        self, namespace: str | None, ids: list[str], query: str
    ) -> dict[str, float]:
        async with self._pool.connection() as conn:
            return await metrics.timed(
                "graph", repository.proximity(conn, namespace, ids, ids[:GRAPH_SEEDS], query)
            )

    async def _around(
        self, namespace: str | None, ids: list[str], cfg: neighbours.NeighbourSettings
    ) -> tuple[neighbours.Found, dict[str, Vector]]:
        """The top candidates' arrival neighbours (and their vectors, when coherence is
        asked)."""
        async with self._pool.connection() as conn:
            found, versions = await metrics.timed(
                "neighbours", repository.around(conn, namespace, ids[:GRAPH_SEEDS], cfg)
            )
            if not cfg.coherence_full or not found:
                return found, {}
            vectors = self._stored_vectors.of(conn, versions)
            return found, await metrics.timed("neighbour_vectors", vectors)

    async def _one_hop(self, namespace: str | None, seeds: list[str]) -> list[hops.Hop]:
        """The memories one hop from the seeds (see ``hops``); none when they cannot be read
        (the expansion only adds candidates: never fail a search on it)."""
        try:
            async with self._pool.connection() as conn:
                return await metrics.timed("hops", repository.one_hop(conn, namespace, seeds))
        except Exception as exc:
            log.warning("one-hop expansion unavailable; answering without it", error=str(exc))
            return []

    async def _feedback(
        self,
        ids: list[str],
        query_vector: Vector,
        limit: int,
        flt: IndexFilter,
        cfg: feedback.FeedbackSettings,
    ) -> list[tuple[str, float]]:
        """The vector index's roots for the query moved toward the stored vectors of the best
        fused candidates (see ``feedback``); none when they cannot be had (the list only adds
        to the fusion: never fail a search on it)."""
        seeds = ids[: cfg.seeds]
        if not seeds:
            return []
        try:
            async with self._pool.connection() as conn:
                read = await metrics.timed(
                    "feedback_read", repository.versioned_vectors(conn, seeds)
                )
            moved = feedback.moved_query(
                query_vector, [read[i][1] for i in seeds if i in read], cfg.mix
            )
            if moved is None:
                return []
            hits = await metrics.timed("feedback", self._vector_index.search(moved, limit, flt))
        except Exception as exc:
            log.warning(
                "pseudo-relevance feedback unavailable; answering without it", error=str(exc)
            )
            return []
        return _roots(best_first_hits(hits))

    async def _score_reachable(
        self,
        q: SearchQuery,
        cfg: scoring.ScoringSettings,
        ctx: ranking.ScoreContext,
        candidates: list[str],
        neighbour_only: set[str],
        fused: dict[str, Fused],
        rows: dict[str, Candidate],
    ) -> tuple[list[ScoredMemory], int]:
        """Score the candidates whose rows are read; read more, best first, while an unread
        candidate can still reach the page (all of them in legacy mode). Returns the scored
        results and how many candidates were never read."""
        pending = [i for i in candidates if i not in rows]
        ready = [i for i in candidates if i in rows]
        scored: list[ScoredMemory] = []
        while True:
            usable = ranking.usable(ready, rows, fused, neighbour_only, ctx)
            scored += ranking.score(q, cfg, usable, rows, ctx)
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

    @staticmethod
    def _cost(compact: bool) -> Callable[[ScoredMemory], int]:
        if compact:
            return lambda s: (
                packing.COMPACT_OVERHEAD_TOKENS
                + packing.estimate_tokens(s.memory.content[: packing.PREVIEW_CHARS])
            )
        return lambda s: packing.RESULT_OVERHEAD_TOKENS + packing.estimate_tokens(s.memory.content)

    async def linked(self, result_ids: list[str], limit: int) -> list[LinkedMemory]:
        if not result_ids or limit <= 0:
            return []
        async with self._pool.connection() as conn:
            links = await repository.linked(conn, result_ids, limit)
            rows = await memories.get_records(conn, [link.memory_id for link in links])
        return [LinkedMemory(rows[x.memory_id], x) for x in links if x.memory_id in rows]


async def _nothing() -> dict[str, float]:
    return {}


async def _no_neighbours() -> tuple[neighbours.Found, dict[str, Vector]]:
    return {}, {}


async def _no_hops() -> list[hops.Hop]:
    return []


async def _no_roots() -> list[tuple[str, float]]:
    return []


def _packed_bytes(tokens: Packed) -> int:
    return tokens.nbytes


def _roots(hits: Sequence[IndexHit]) -> list[tuple[str, float]]:
    """An index's hits as roots, best first (a chunk stands in for its memory)."""
    return collapse_to_roots([(h.memory_id, h.score, h.parent_id) for h in hits])
