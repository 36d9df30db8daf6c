"""The vector leg re-ranked with contextual vectors (pure)."""

from __future__ import annotations

import numpy as np

from exocortex.retrieval.search.context import rerank

Q = np.array([1.0, 0.0, 0.0], dtype=np.float32)


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_a_memory_whose_context_matches_moves_up() -> None:
    roots = [("a", 0.6), ("b", 0.5), ("c", 0.4)]
    # c's context (the memory before it) is about the query; a's and b's are not.
    contexts = {"a": _unit(0.0, 1.0, 0.0), "b": _unit(0.1, 1.0, 0.0), "c": _unit(1.0, 0.1, 0.0)}
    ranked = [r for r, _ in rerank(roots, contexts, Q, 1.0)]
    assert ranked[0] == "c"


def test_without_contexts_or_weight_the_order_is_the_index_s() -> None:
    roots = [("a", 0.6), ("b", 0.5), ("c", 0.4)]
    assert rerank(roots, {}, Q, 1.0) == roots
    assert rerank(roots, {"c": _unit(1.0, 0.0, 0.0)}, Q, 0.0) == roots


def test_a_memory_without_context_counts_its_own_similarity() -> None:
    # b has no context vector: 0.5 + 0.5 = 1.0 beats a's 0.6 + 0.1.
    roots = [("a", 0.6), ("b", 0.5)]
    contexts = {"a": _unit(0.1, 1.0, 0.0)}
    assert [r for r, _ in rerank(roots, contexts, Q, 1.0)] == ["b", "a"]


def test_raw_scores_are_kept_and_ties_keep_the_index_order() -> None:
    roots = [("a", 0.5), ("b", 0.5)]
    out = rerank(roots, {}, Q, 1.0)
    assert out == roots
    contexts = {"a": _unit(1.0, 0.0, 0.0), "b": _unit(1.0, 0.0, 0.0)}
    assert rerank(roots, contexts, Q, 1.0) == roots


def test_a_vector_of_another_size_is_ignored() -> None:
    roots = [("a", 0.6), ("b", 0.5)]
    contexts = {"b": np.ones(5, dtype=np.float32)}
    assert [r for r, _ in rerank(roots, contexts, Q, 1.0)] == ["a", "b"]
