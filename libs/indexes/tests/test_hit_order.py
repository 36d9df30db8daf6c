"""Equal scores rank in memory id order, whatever order an engine returned them in."""

from __future__ import annotations

import itertools

from exocortex.indexes.base import IndexHit, best_first


def test_ties_rank_by_memory_id_in_every_arrival_order() -> None:
    hits = [IndexHit("01B", 0.5), IndexHit("01A", 0.9), IndexHit("01D", 0.5), IndexHit("01C", 0.5)]
    orders = {tuple(h.memory_id for h in best_first(p)) for p in itertools.permutations(hits)}
    assert orders == {("01A", "01B", "01C", "01D")}


def test_a_higher_score_wins_over_a_smaller_id() -> None:
    ranked = best_first([IndexHit("01A", 0.1), IndexHit("01Z", 0.2)])
    assert [h.memory_id for h in ranked] == ["01Z", "01A"]
