"""Scoring the fused candidates: the neighbours' credit, the boosts, the metadata penalty and the
threshold (pure; the search service reads the rows)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from exocortex.core.domain.vectors import Vector
from exocortex.indexes.base import IndexFilter
from exocortex.retrieval.search import hops, neighbours, scoring
from exocortex.retrieval.search.fusion import Fused
from exocortex.retrieval.search.query import SearchQuery
from exocortex.retrieval.search.results import Candidate, ScoredMemory


@dataclass(frozen=True)
class ScoreContext:
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


def add_neighbours(
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
    credits = neighbours.bonuses(near, seed_scores, cfg.weight, shares)
    lifted = _lift(fused, credits, "neighbour")
    return [i for i in credits if i in lifted and i not in alive]


def add_hops(
    found: list[hops.Hop],
    seed_scores: dict[str, float],
    fused: dict[str, Fused],
    cfg: hops.HopSettings,
) -> list[str]:
    """Pass the live seeds' scores (as the indexes gave them, ``seed_scores``) on to the
    memories one hop from them (``hops``); returns the memories that were not candidates yet,
    at most ``cfg.limit`` of them (new candidates, checked against the filters once their rows
    are read)."""
    if cfg.weight <= 0 or not found:
        return []
    credits, added = hops.chosen(hops.credits(found, seed_scores, cfg.weight), fused, cfg.limit)
    _lift(fused, credits, "hop")
    return added


def _lift(fused: dict[str, Fused], credits: dict[str, neighbours.Credit], signal: str) -> set[str]:
    """Add each memory's credit to its fused score (bounded: ``neighbours.lifted``), kept in
    its raw scores under ``signal``; the memories it lifted (one already past its ceiling on
    its own is not)."""
    lifted: set[str] = set()
    for memory_id, credit in credits.items():
        entry = fused.get(memory_id)
        if entry is None:
            entry = fused[memory_id] = Fused(memory_id)
        score = neighbours.lifted(entry.score, credit)
        if score <= entry.score:
            continue
        entry.raw_scores[signal] = score - entry.score
        entry.score = score
        lifted.add(memory_id)
    return lifted


def usable(
    ids: list[str],
    rows: dict[str, Candidate],
    fused: dict[str, Fused],
    neighbour_only: set[str],
    ctx: ScoreContext,
) -> list[Fused]:
    """The candidates whose rows are read and may be answered: live, and for a neighbour the
    indexes did not return, within the search's filters too."""
    return [
        fused[i]
        for i in ids
        if i in rows
        and (
            neighbours.passes(rows[i].memory, ctx.flt, ctx.now)
            if i in neighbour_only
            else rows[i].memory.is_live(ctx.now)
        )
    ]


def score(
    q: SearchQuery,
    cfg: scoring.ScoringSettings,
    fused: list[Fused],
    rows: dict[str, Candidate],
    ctx: ScoreContext,
) -> list[ScoredMemory]:
    best_fused, best_keyword = ctx.best_fused, ctx.best_keyword
    if q.min_score is not None:
        threshold = q.min_score
    else:
        threshold = cfg.rrf_min_score if cfg.use_rrf else cfg.legacy_min_score
    out: list[ScoredMemory] = []
    for entry in fused:
        candidate = rows[entry.memory_id]
        memory = candidate.memory
        sig = scoring.signals(
            memory,
            candidate.extras,
            now=ctx.now,
            terms=ctx.terms,
            max_access=ctx.max_access,
            cfg=cfg,
        )
        graph_score = entry.raw_scores.get("graph", 0.0)
        if cfg.use_rrf:
            boost = scoring.boost_multiplier(sig, cfg)
            value = entry.score * boost + (cfg.tag_boost * best_fused if sig.tag else 0.0)
        else:
            boost = 1.0
            keyword_norm = (
                entry.raw_scores.get("keyword", 0.0) / best_keyword if best_keyword > 0 else 0.0
            )
            value = scoring.legacy_score(
                entry.raw_scores.get("vector", 0.0), keyword_norm, graph_score, sig, cfg
            )
        penalize = cfg.metadata_mode == "penalize" and memory.is_metadata and not ctx.meta_wanted
        factor = cfg.metadata_penalty if penalize else 1.0
        value *= factor
        if value < threshold:
            continue
        out.append(
            ScoredMemory(
                memory=memory,
                score=value,
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
