"""Weighted Reciprocal Rank Fusion, pure so it is easy to test and reason about.

rrf(d) = Σ_lists weight_list / (k + rank_list(d)), ranks starting at 1. A document found by only
one list still scores (a single keyword hit is never dropped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass
class Fused:
    memory_id: str
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    raw_scores: dict[str, float] = field(default_factory=dict)


def collapse_to_roots(
    hits: Sequence[tuple[str, float, str | None]],
) -> list[tuple[str, float]]:
    """Chunks stand in for their parent memory: keep each root once, at its best position."""
    seen: dict[str, float] = {}
    for memory_id, score, parent_id in hits:
        root = parent_id or memory_id
        if root not in seen:
            seen[root] = score
    return list(seen.items())


def rrf(
    ranked_lists: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float],
    k: float = 60.0,
) -> list[Fused]:
    fused: dict[str, Fused] = {}
    for name, hits in ranked_lists.items():
        weight = weights.get(name, 1.0)
        for rank, (memory_id, raw) in enumerate(hits, start=1):
            entry = fused.setdefault(memory_id, Fused(memory_id))
            entry.score += weight / (k + rank)
            entry.ranks[name] = rank
            entry.raw_scores[name] = raw
    return sorted(fused.values(), key=lambda f: (-f.score, f.memory_id))


def rank_by_score(scores: Mapping[str, float], order: Sequence[str]) -> list[tuple[str, float]]:
    """The positive scores, best first; ties keep their position in `order` (unknown ids last).

    A signal with few distinct values (graph proximity) is mostly ties, and RRF turns list
    positions into weight: ties must keep a meaningful order, not an arbitrary one such as ids.
    """
    position = {memory_id: i for i, memory_id in enumerate(order)}
    return sorted(
        ((memory_id, score) for memory_id, score in scores.items() if score > 0),
        key=lambda p: (-p[1], position.get(p[0], len(position)), p[0]),
    )
