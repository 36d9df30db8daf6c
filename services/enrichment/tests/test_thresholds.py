"""Pure parts of the enrichment worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from exocortex.core.clients.retrieval import Neighbour
from exocortex.enrichment.service import _roots
from exocortex.enrichment.temporal import EPOCH_WINDOW, WEEKLY_WINDOW, month_bounds, window_for
from exocortex.enrichment.thresholds import Thresholds


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


def test_every_threshold_is_a_setting_and_bad_values_fall_back_or_clamp() -> None:
    tuned = Thresholds.from_settings(
        {
            "enrichment.entity_min_confidence": "0.8",
            "enrichment.neighbour_limit": "25",
            "enrichment.relation_limit": "2",
            "enrichment.contradiction_threshold": "0.65",
            "enrichment.contradiction_negation_overlap": "0.5",
        }
    )
    assert (tuned.entity_confidence, tuned.neighbours, tuned.relation_limit) == (0.8, 25, 2)
    assert (tuned.contradiction, tuned.negation_overlap) == (0.65, 0.5)
    odd = Thresholds.from_settings(
        {"enrichment.neighbour_limit": "0", "enrichment.relation_threshold": "nan"}
    )
    assert odd.neighbours == 1
    assert odd.relation == 0.75


def test_temporal_windows_need_a_narrative() -> None:
    assert window_for(["narrative", "weekly-summary"]) == WEEKLY_WINDOW
    assert window_for(["narrative", "epoch", "weekly-summary"]) == EPOCH_WINDOW
    assert window_for(["weekly-summary"]) is None
    assert window_for(["epoch"]) is None
    assert window_for(["narrative"]) is None
    assert (WEEKLY_WINDOW.days, WEEKLY_WINDOW.cap, EPOCH_WINDOW.days, EPOCH_WINDOW.cap) == (
        7,
        15,
        31,
        30,
    )


def test_month_bounds_are_utc_calendar_months() -> None:
    late_december = datetime(2026, 12, 31, 23, 30, tzinfo=UTC)
    assert month_bounds(late_december) == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    )
    # 00:30 on 1 March in UTC+2 is still February in UTC.
    plus_two = timezone(timedelta(hours=2))
    assert month_bounds(datetime(2026, 3, 1, 0, 30, tzinfo=plus_two))[0] == datetime(
        2026, 2, 1, tzinfo=UTC
    )
