"""Pure parts of the enrichment worker."""

from __future__ import annotations

from exocortex.core.clients.retrieval import Neighbour
from exocortex.enrichment.service import Thresholds, _roots


def test_chunk_hits_collapse_onto_their_memory_and_self_is_dropped() -> None:
    hits = [
        Neighbour("c1", "m1", 0.93),
        Neighbour("m1", None, 0.90),
        Neighbour("self-chunk", "self", 0.88),
        Neighbour("m2", None, 0.80),
    ]
    roots = _roots(hits, "self")
    assert [(n.memory_id, n.similarity) for n in roots] == [("m1", 0.93), ("m2", 0.80)]


def test_thresholds_default_and_follow_settings() -> None:
    default = Thresholds.from_settings({})
    assert (default.relation, default.relation_limit, default.goal) == (0.75, 5, 0.55)
    tuned = Thresholds.from_settings({"enrichment.relation_threshold": "0.8", "x": "y"})
    assert tuned.relation == 0.8
    broken = Thresholds.from_settings({"enrichment.goal_threshold": "high"})
    assert broken.goal == 0.55
