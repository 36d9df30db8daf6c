from datetime import UTC, datetime, timedelta
from typing import Any

from exocortex.core.indexes.base import IndexFilter
from exocortex.retrieval.neighbours import (
    CEILING,
    Credit,
    NeighbourSettings,
    bonuses,
    evidence,
    lifted,
    passes,
)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def _row(**changes: Any) -> dict[str, Any]:
    row = {
        "id": "m1",
        "is_active": True,
        "expires_at": None,
        "tags": ["food"],
        "content_type": "note",
        "source": "api",
        "created_at": NOW - timedelta(days=1),
        "importance": 0.5,
        "is_metadata": False,
    }
    return row | changes


def test_seeds_pass_on_their_score_divided_by_distance_and_summed() -> None:
    found = {"a": [("n", 1), ("far", 2)], "b": [("n", 2)], "gone": [("x", 1)]}
    got = bonuses(found, {"a": 0.2, "b": 0.1}, weight=0.5)
    assert {k: v.value for k, v in got.items()} == {
        "n": 0.5 * 0.2 + 0.5 * 0.1 / 2,
        "far": 0.5 * 0.2 / 2,
    }
    # The ceiling is the best crediting seed's: "n" may rise to just below "a", not past it.
    assert got["n"].ceiling == CEILING * 0.2


def test_a_neighbour_never_overtakes_the_seed_that_lifts_it() -> None:
    credit = Credit(value=0.05, ceiling=CEILING * 0.10)
    assert lifted(0.0, credit) == 0.05  # far below its seed: the whole credit
    assert lifted(0.08, credit) == CEILING * 0.10  # would pass its seed: stops below it
    assert lifted(0.12, credit) == 0.12  # already above on its own: credit never lowers


def test_evidence_is_zero_at_chance_and_grows_with_clustered_hits() -> None:
    top = ["a", "b", "c", "d"]
    # Every top hit has another beside it, in a namespace of 1000: arrival order means a lot.
    clustered = {"a": [("b", 1)], "b": [("a", 1)], "c": [("d", 1)], "d": [("c", 1)]}
    assert evidence(clustered, top, 1000) > 0.95
    # None does: nothing to go on.
    scattered = {m: [("x" + m, 1), ("y" + m, 1)] for m in top}
    assert evidence(scattered, top, 1000) == 0.0
    # The top hits are the whole namespace: every neighbour is a top hit by necessity.
    assert evidence(clustered, top, 4) == 0.0
    # Half of them clustered, in a namespace where chance is small: about half the weight.
    half = {"a": [("b", 1)], "b": [("a", 1)], "c": [("z", 1)], "d": [("y", 1)]}
    assert 0.45 < evidence(half, top, 1000) < 0.5


def test_settings_are_bounded_and_zero_weight_disables() -> None:
    cfg = NeighbourSettings.from_settings({"search.neighbour_window": "99"})
    assert cfg.window == 10
    assert cfg.weight == 0.3
    assert cfg.max_gap == timedelta(minutes=30)
    assert cfg.evidence_top == 10
    assert not NeighbourSettings.from_settings({"scoring.neighbour_weight": "0"}).enabled
    assert NeighbourSettings.from_settings({"scoring.neighbour_weight": "x"}).weight == 0.3


def test_a_neighbour_must_meet_every_filter() -> None:
    assert passes(_row(), IndexFilter(tags_any=("food",), content_type="note"), NOW)
    assert not passes(_row(is_active=False), IndexFilter(), NOW)
    assert not passes(_row(expires_at=NOW), IndexFilter(), NOW)
    assert not passes(_row(tags=[]), IndexFilter(tags_any=("food",)), NOW)
    assert not passes(_row(), IndexFilter(content_type="decision"), NOW)
    assert not passes(_row(), IndexFilter(source="mcp"), NOW)
    assert not passes(_row(), IndexFilter(created_after=NOW), NOW)
    assert not passes(_row(), IndexFilter(created_before=NOW - timedelta(days=1)), NOW)
    assert not passes(_row(), IndexFilter(min_importance=0.6), NOW)
    assert not passes(_row(is_metadata=True), IndexFilter(exclude_metadata=True), NOW)
    assert not passes(_row(), IndexFilter(exclude_ids=("m1",)), NOW)


def test_the_arrival_window_is_an_id_range_around_the_seed() -> None:
    from ulid import ULID

    from exocortex.retrieval.neighbours import _id_window

    at = ULID.from_timestamp(NOW.timestamp())
    window = _id_window(str(at), timedelta(minutes=30))
    assert window is not None
    low, high = window
    inside = str(ULID.from_timestamp((NOW + timedelta(minutes=29)).timestamp()))
    outside = str(ULID.from_timestamp((NOW - timedelta(minutes=31)).timestamp()))
    assert low < str(at) < high
    assert low < inside < high
    assert not low <= outside <= high
    assert _id_window("not-a-ulid", timedelta(minutes=30)) is None
    assert _id_window("!1JD3Z8Q6V0000000000000000", timedelta(minutes=1)) is None


def test_the_window_matches_the_ulid_library() -> None:
    import random

    from ulid import ULID

    from exocortex.retrieval.neighbours import _id_window

    rng = random.Random(3)
    for _ in range(500):
        seed = ULID.from_timestamp(rng.uniform(0, 4_000_000_000))
        gap = timedelta(milliseconds=rng.randint(0, 10_000_000))
        span = int(gap.total_seconds() * 1000)
        low = max(0, seed.milliseconds - span) << 80
        high = ((seed.milliseconds + span + 1) << 80) - 1
        assert _id_window(str(seed), gap) == (str(ULID.from_int(low)), str(ULID.from_int(high)))
