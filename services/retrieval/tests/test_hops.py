import pytest

from exocortex.retrieval.search.fusion import Fused
from exocortex.retrieval.search.hops import (
    ENTITY,
    LINK,
    Hop,
    HopSettings,
    chosen,
    credits,
    strengths,
)
from exocortex.retrieval.search.neighbours import CEILING
from exocortex.retrieval.search.ranking import add_hops


def test_a_hop_counts_the_larger_of_its_link_and_its_entities_at_most_one() -> None:
    got = strengths(
        [
            Hop("s", "a", LINK, 0.4),
            Hop("s", "a", ENTITY, 0.5),
            Hop("s", "b", ENTITY, 3.0),
            Hop("s", "c", LINK, -1.0),
            Hop("s", "s", LINK, 1.0),  # a seed is no hop from itself
        ]
    )
    assert got == {("s", "a"): 0.5, ("s", "b"): 1.0, ("s", "c"): 0.0}


def test_seeds_pass_weight_times_score_times_strength_summed_with_a_ceiling() -> None:
    hops = [
        Hop("s1", "x", LINK, 0.8),
        Hop("s2", "x", ENTITY, 0.25),
        Hop("dead", "y", LINK, 1.0),
    ]
    got = credits(hops, {"s1": 0.2, "s2": 0.1}, weight=0.5)
    assert set(got) == {"x"}  # a seed without a score passes nothing
    assert got["x"].value == pytest.approx(0.5 * 0.2 * 0.8 + 0.5 * 0.1 * 0.25)
    assert got["x"].ceiling == pytest.approx(CEILING * 0.2)


def test_weight_zero_passes_nothing() -> None:
    assert credits([Hop("s", "x", LINK, 1.0)], {"s": 0.3}, weight=0.0) == {}


def test_at_most_limit_new_memories_the_best_credited_first() -> None:
    hops = [Hop("s", f"n{i}", ENTITY, i / 10) for i in range(1, 6)] + [Hop("s", "k", LINK, 0.1)]
    found = credits(hops, {"s": 1.0}, weight=1.0)
    keep, new = chosen(found, known={"k"}, limit=2)
    assert new == ["n5", "n4"]
    assert set(keep) == {"n5", "n4", "k"}  # a known candidate is always credited


def test_add_hops_lifts_below_the_seed_and_adds_bounded_candidates() -> None:
    fused = {"s": Fused("s", 0.3), "k": Fused("k", 0.01)}
    hops = [Hop("s", "k", LINK, 1.0), Hop("s", "new", ENTITY, 1.0), Hop("s", "low", LINK, 0.1)]
    cfg = HopSettings(weight=2.0, seeds=5, limit=1)
    added = add_hops(hops, {"s": 0.3}, fused, cfg)
    assert added == ["new"]
    assert "low" not in fused
    # 2 × 0.3 would pass the seed: held at CEILING of its score.
    assert fused["new"].score == pytest.approx(CEILING * 0.3)
    assert fused["k"].score == pytest.approx(CEILING * 0.3)
    assert fused["k"].raw_scores["hop"] == pytest.approx(CEILING * 0.3 - 0.01)
    assert fused["s"].score == 0.3


def test_add_hops_off_adds_nothing() -> None:
    fused = {"s": Fused("s", 0.3)}
    assert add_hops([Hop("s", "n", LINK, 1.0)], {"s": 0.3}, fused, HopSettings(weight=0)) == []
    assert set(fused) == {"s"}


def test_settings_are_read_and_bounded() -> None:
    cfg = HopSettings.from_settings(
        {"scoring.expand_weight": "0.3", "search.expand_seeds": "999", "search.expand_limit": "x"}
    )
    assert cfg == HopSettings(weight=0.3, seeds=50, limit=10)
    assert cfg.enabled
    assert not HopSettings.from_settings({}).enabled
    assert not HopSettings(weight=0.3, seeds=0).enabled
