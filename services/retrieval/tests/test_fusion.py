import random

from exocortex.retrieval.search.fusion import (
    add_list,
    best_first,
    collapse_to_roots,
    fuse,
    rank_by_score,
)


def test_rrf_sums_weighted_reciprocal_ranks() -> None:
    fused = best_first(
        fuse(
            {"vector": [("a", 0.9), ("b", 0.8)], "keyword": [("b", 12.0), ("c", 3.0)]},
            {"vector": 1.0, "keyword": 0.5},
            k=60,
        )
    )
    scores = {f.memory_id: f.score for f in fused}
    assert scores["b"] == 1 / 62 + 0.5 / 61
    assert scores["a"] == 1 / 61
    assert scores["c"] == 0.5 / 62
    assert [f.memory_id for f in fused] == ["b", "a", "c"]
    assert fused[0].ranks == {"vector": 2, "keyword": 1}


def test_single_keyword_hit_is_kept_and_scored() -> None:
    fused = best_first(
        fuse({"vector": [], "keyword": [("only", 1.0)]}, {"vector": 1, "keyword": 1})
    )
    assert len(fused) == 1
    assert fused[0].score > 0


def test_chunks_collapse_onto_their_parent_at_best_rank() -> None:
    hits = [("chunk-2", 0.9, "parent"), ("other", 0.8, None), ("chunk-1", 0.7, "parent")]
    assert collapse_to_roots(hits) == [("parent", 0.9), ("other", 0.8)]


def test_rank_by_score_breaks_ties_by_the_given_order_not_by_id() -> None:
    proximity = {"a": 0.5, "z": 0.5, "m": 1.0, "gone": 0.0, "late": 0.5}
    ranked = rank_by_score(proximity, order=["z", "m", "a"])
    assert ranked == [("m", 1.0), ("z", 0.5), ("a", 0.5), ("late", 0.5)]


def test_a_list_added_later_scores_exactly_as_the_formula_over_all_lists() -> None:
    """Search fuses the index lists, then adds graph proximity to the same fusion: the result
    must be Σ weight / (k + rank) over all three lists, summed in list order."""
    rng = random.Random(7)
    ids = [f"m{i:03d}" for i in range(300)]
    lists = {
        name: [(i, rng.random()) for i in rng.sample(ids, 120)]
        for name in ("vector", "keyword", "graph")
    }
    weights = {"vector": 1.0, "keyword": 0.7, "graph": 0.35}
    later = fuse({n: lists[n] for n in ("vector", "keyword")}, weights, k=60)
    add_list(later, "graph", lists["graph"], weights["graph"], k=60)

    expected: dict[str, float] = {}
    for name, hits in lists.items():
        for rank, (memory_id, _raw) in enumerate(hits, start=1):
            expected[memory_id] = expected.get(memory_id, 0.0) + weights[name] / (60 + rank)
    assert {f.memory_id: f.score for f in later.values()} == expected
    for name, hits in lists.items():
        for rank, (memory_id, raw) in enumerate(hits, start=1):
            assert later[memory_id].ranks[name] == rank
            assert later[memory_id].raw_scores[name] == raw
    ordered = best_first(later)
    assert [f.memory_id for f in ordered] == sorted(expected, key=lambda i: (-expected[i], i))
