"""Comparing a query's current top results with its baseline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Comparison:
    overlap_at_k: float
    avg_rank_shift: float
    exact_order: bool
    alert: bool


def compare(
    baseline: Sequence[str],
    current: Sequence[str],
    k: int,
    *,
    min_overlap: float,
    max_rank_shift: float,
) -> Comparison:
    """overlap@k = |top-k current ∩ top-k baseline| / n, n the longer of the two lists (at most
    k: the seed divided by k, so a query with fewer than k results always alerted); the rank
    shift is the mean |Δposition| over the shared ids (k when none is shared). An empty
    baseline and an empty result agree."""
    base, cur = list(baseline[:k]), list(current[:k])
    if not base and not cur:
        return Comparison(1.0, 0.0, True, False)
    shared = set(base) & set(cur)
    overlap = len(shared) / max(len(base), len(cur))
    shift = (
        sum(abs(base.index(i) - cur.index(i)) for i in shared) / len(shared) if shared else float(k)
    )
    alert = overlap < min_overlap or shift > max_rank_shift
    return Comparison(round(overlap, 4), round(shift, 4), base == cur, alert)
