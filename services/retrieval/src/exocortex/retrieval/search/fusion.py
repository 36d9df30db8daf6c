"""Weighted Reciprocal Rank Fusion, pure so it is easy to test and reason about.

rrf(d) = Σ_lists weight_list / (k + rank_list(d)), ranks starting at 1. A document found by only
one list still scores (a single keyword hit is never dropped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
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


def fuse(
    ranked_lists: Mapping[str, Sequence[tuple[str, float]]],
    weights: Mapping[str, float],
    k: float = 60.0,
) -> dict[str, Fused]:
    """Each document's fused score, ranks and raw scores, by id (in no particular order)."""
    fused: dict[str, Fused] = {}
    for name, hits in ranked_lists.items():
        add_list(fused, name, hits, weights.get(name, 1.0), k)
    return fused


def add_list(
    fused: dict[str, Fused],
    name: str,
    hits: Sequence[tuple[str, float]],
    weight: float,
    k: float = 60.0,
) -> None:
    """Add one more ranked list to a fusion in place. Scores are sums taken in list order, so
    adding a list last gives exactly the scores of fusing all the lists at once."""
    for rank, (memory_id, raw) in enumerate(hits, start=1):
        entry = fused.get(memory_id)
        if entry is None:
            entry = fused[memory_id] = Fused(memory_id)
        entry.score += weight / (k + rank)
        entry.ranks[name] = rank
        entry.raw_scores[name] = raw


def best_first(fused: Mapping[str, Fused]) -> list[Fused]:
    """Highest fused score first; ties by id, so the order never depends on the input's."""
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
