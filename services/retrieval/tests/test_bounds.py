"""The bound that lets search skip reading rows that cannot reach the page."""

from __future__ import annotations

import itertools
import random
from datetime import UTC, datetime, timedelta

import pytest

from exocortex.retrieval.search import bounds, scoring
from exocortex.retrieval.search.fusion import Fused

CFG = scoring.ScoringSettings()
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def final_score(fused: float, sig: scoring.Signals, best_fused: float, penalised: bool) -> float:
    """The RRF-mode score exactly as search computes it."""
    score = fused * scoring.boost_multiplier(sig, CFG) + (
        CFG.tag_boost * best_fused if sig.tag else 0.0
    )
    return score * (CFG.metadata_penalty if penalised else 1.0)


def test_the_bound_holds_for_every_signal_at_its_extremes() -> None:
    best = 0.033
    extremes = ((0.0, 1.0),) * 7
    for *signals, penalised in itertools.product(*extremes, (False, True)):
        sig = scoring.Signals(*signals)
        for fused in (0.0, 0.004, 0.0164, best):
            assert (
                final_score(fused, sig, best, penalised)
                <= bounds.BestPossible(best, CFG)(fused) + 1e-12
            )


def test_the_bound_is_tight_for_a_fully_boosted_tagged_memory() -> None:
    sig = scoring.Signals(1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    assert bounds.BestPossible(0.03, CFG)(0.01) == pytest.approx(
        final_score(0.01, sig, 0.03, penalised=False)
    )


def test_every_unread_candidate_is_assumed_to_match_a_tag() -> None:
    # Tags are not looked up before rows are read: the bonus is in every bound.
    # 1.6: one plus every boost weight (recency .2, frequency .1, usefulness, valence .05,
    # quality, goal .1).
    assert bounds.BestPossible(0.03, CFG)(0.01) == pytest.approx(0.01 * 1.6 + 0.1 * 0.03)


def test_negative_fused_scores_are_never_skipped() -> None:
    assert bounds.BestPossible(0.03, CFG)(-0.01) == float("inf")


def test_reachable_keeps_what_could_tie_or_beat_the_floor() -> None:
    fused = {"a": Fused("a", 0.010), "b": Fused("b", 0.005), "c": Fused("c", 0.002)}
    floor = 0.005 * bounds.max_boost(CFG) + CFG.tag_boost * 0.03
    assert bounds.reachable(["a", "b", "c"], fused, floor, 0.03, CFG) == ["a", "b"]
    # The tag bonus alone can lift a weak candidate over a low floor.
    assert bounds.reachable(["c"], fused, 0.005, 0.03, CFG) == ["c"]
    assert bounds.reachable(["c"], fused, 0.0063, 0.03, CFG) == []
    # A page that is not full yet needs every candidate.
    assert bounds.reachable(["a", "b", "c"], fused, None, 0.03, CFG) == ["a", "b", "c"]


def _simulate(rng: random.Random) -> tuple[list[str], list[str]]:
    """One random search: the page from reading only reachable rows, and from reading all."""
    n, k = rng.randint(1, 120), rng.randint(1, 15)
    fused = {f"m{i:03d}": Fused(f"m{i:03d}", rng.uniform(0.0, 0.033)) for i in range(n)}
    best = max(f.score for f in fused.values())
    scores: dict[str, float] = {}
    for memory_id, entry in fused.items():
        sig = scoring.Signals(
            scoring.recency(NOW - timedelta(days=rng.uniform(0, 400)), NOW, rng.random(), 0.05),
            rng.random() * rng.randint(0, 1),
            rng.random() * rng.randint(0, 1),
            rng.random(),
            float(rng.random() < 0.1),
        )
        scores[memory_id] = final_score(entry.score, sig, best, penalised=rng.random() < 0.1)

    def top(keys: list[str]) -> list[str]:
        return sorted(keys, key=lambda i: (-scores[i], i))[:k]

    order = sorted(fused, key=lambda i: (-fused[i].score, i))
    read = order[: max(20, 2 * k)]
    pending = order[len(read) :]
    while pending:
        floor = sorted((scores[i] for i in read), reverse=True)[k - 1] if len(read) >= k else None
        need = bounds.reachable(pending, fused, floor, best, CFG)
        if not need:
            break
        read += need
        pending = [i for i in pending if i not in need]
    return top(read), top(list(fused))


def test_skipping_by_the_bound_never_changes_the_page() -> None:
    rng = random.Random(7)
    for _ in range(300):
        bounded, everything = _simulate(rng)
        assert bounded == everything
