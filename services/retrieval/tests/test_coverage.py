"""Coverage-aware ordering (pure): a near copy of a memory ranked above it gives way to a memory
about something else; memories about different things keep their order; the settings."""

from __future__ import annotations

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search.coverage import CoverageSettings, reorder


def _unit(*values: float) -> Vector:
    v = np.array(values, dtype=np.float32)
    out: Vector = v / np.linalg.norm(v)
    return out


# "a" and its near copy "a2" (cosine ≈ 0.99); "b" and "c" about other things.
VECTORS = {
    "a": _unit(1, 0, 0),
    "a2": _unit(1, 0.1, 0),
    "b": _unit(0, 1, 0),
    "c": _unit(0, 0, 1),
}
SCORES = {"a": 1.0, "a2": 0.9, "b": 0.8, "c": 0.5}
HEAD = ["a", "a2", "b", "c"]


def test_a_near_copy_gives_way_to_a_memory_about_something_else() -> None:
    # a2 repeats a almost in full: 0.9 - 0.5 × ~0.99 falls below b (0.8) and c (0.5).
    assert reorder(HEAD, SCORES, VECTORS, weight=0.5, similarity=0.5) == ["a", "b", "c", "a2"]
    # A lighter weight lets it past c only: 0.9 - 0.2 × ~0.99 ≈ 0.70.
    assert reorder(HEAD, SCORES, VECTORS, weight=0.2, similarity=0.5) == ["a", "b", "a2", "c"]


def test_a_small_weight_moves_only_what_is_close_to_begin_with() -> None:
    # 0.9 - 0.05 × ~0.98 still beats 0.8: the copy keeps its place.
    assert reorder(HEAD, SCORES, VECTORS, weight=0.05, similarity=0.5) == HEAD


def test_below_the_similarity_nothing_repeats() -> None:
    # Orthogonal vectors (cosine 0) never hold each other back, whatever the weight.
    vectors = {"a": _unit(1, 0, 0), "b": _unit(0, 1, 0), "c": _unit(0, 0, 1)}
    scores = {"a": 1.0, "b": 0.99, "c": 0.98}
    assert reorder(["a", "b", "c"], scores, vectors, weight=1.0, similarity=0.0) == [
        "a",
        "b",
        "c",
    ]
    # a2 sits at cosine ≈ 0.99 with a: a similarity above that lets it keep its place.
    assert reorder(HEAD, SCORES, VECTORS, weight=1.0, similarity=0.995) == HEAD


def test_memories_without_a_vector_repeat_nothing() -> None:
    vectors = {"a": VECTORS["a"]}
    assert reorder(HEAD, SCORES, vectors, weight=1.0, similarity=0.5) == HEAD


def test_off_or_too_short_keeps_the_order() -> None:
    assert reorder(HEAD, SCORES, VECTORS, weight=0.0, similarity=0.5) == HEAD
    assert reorder(["a"], SCORES, VECTORS, weight=1.0, similarity=0.5) == ["a"]
    assert reorder([], {}, {}, weight=1.0, similarity=0.5) == []


def test_every_memory_is_kept_once() -> None:
    rng = np.random.default_rng(7)
    ids = [f"m{i}" for i in range(30)]
    vectors = {i: _unit(*rng.normal(size=8)) for i in ids[:25]}
    scores = {i: 1.0 / (5 + n) for n, i in enumerate(ids)}
    order = reorder(ids, scores, vectors, weight=0.3, similarity=0.2)
    assert sorted(order) == sorted(ids)
    assert order[0] == ids[0]  # nothing is picked before the best one


def test_settings() -> None:
    assert not CoverageSettings.from_settings({}).enabled
    cfg = CoverageSettings.from_settings(
        {"scoring.coverage_weight": "0.2", "search.coverage_similarity": "0.6"}
    )
    assert cfg.enabled
    assert cfg.weight == 0.2
    assert cfg.similarity == 0.6
    # Out of range or not a number: the default, or the bound.
    odd = CoverageSettings.from_settings(
        {"scoring.coverage_weight": "-1", "search.coverage_similarity": "1.5"}
    )
    assert odd.weight == 0.0
    assert odd.similarity == 0.99
    assert CoverageSettings.from_settings({"scoring.coverage_weight": "x"}).weight == 0.0
