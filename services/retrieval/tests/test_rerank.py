"""Late-interaction re-scoring (pure): MaxSim, the fused order, the settings."""

from __future__ import annotations

import numpy as np

from exocortex.core.domain.token_vectors import packed
from exocortex.retrieval.search.rerank import RerankSettings, Tokens, maxsim, reorder


def _unit(rows: list[list[float]]) -> Tokens:
    m = np.array(rows, dtype=np.float32)
    out: Tokens = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def test_maxsim_takes_each_query_token_s_best_match() -> None:
    query = _unit([[1, 0, 0], [0, 1, 0]])
    both = _unit([[0, 1, 0], [1, 0, 0], [0, 0, 1]])
    one = _unit([[1, 0, 0], [0, 0, 1]])
    # The memory's tokens are kept packed (int8): a cosine survives that to about 0.999.
    assert abs(maxsim(query, packed(both)) - 1.0) < 1e-3
    assert abs(maxsim(query, packed(one)) - 0.5) < 1e-3
    assert maxsim(query, packed(np.zeros((0, 3), dtype=np.float32))) == 0.0


def test_reorder_fuses_the_order_so_far_with_the_maxsim_order() -> None:
    head = ["a", "b", "c", "d"]
    # d matches best token by token; at half weight it climbs, not to the top.
    similarity = {"a": 0.2, "b": 0.3, "c": 0.1, "d": 0.9}
    order = reorder(head, similarity, 0.5)
    assert order[0] == "a"
    assert order.index("d") < 3
    assert sorted(order) == sorted(head)


def test_reorder_without_similarities_or_weight_keeps_the_order() -> None:
    head = ["a", "b", "c"]
    assert reorder(head, {}, 0.5) == head
    assert reorder(head, {"c": 1.0, "a": 0.0, "b": 0.5}, 0.0) == head


def test_settings_are_the_top_20_by_default_and_clamped() -> None:
    on = RerankSettings.from_settings({})
    assert on.enabled
    assert on.candidates == 20
    assert on.weight == 0.5
    assert not RerankSettings.from_settings({"search.rerank_candidates": "0"}).enabled
    assert RerankSettings.from_settings({"search.rerank_candidates": "5000"}).candidates == 100
    assert RerankSettings.from_settings({"search.rerank_candidates": "x"}).candidates == 20
    assert not RerankSettings.from_settings(
        {"search.rerank_candidates": "20", "scoring.rerank_weight": "0"}
    ).enabled
