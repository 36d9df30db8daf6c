from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.core.records import MemoryRecord
from exocortex.indexes.base import IndexFilter
from exocortex.retrieval.search.neighbours import (
    CEILING,
    Credit,
    NeighbourSettings,
    bonuses,
    coherence,
    lifted,
    passes,
)

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


def _row(**changes: Any) -> MemoryRecord:
    row: dict[str, Any] = {
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
    unset = dict.fromkeys(MemoryRecord.__dataclass_fields__)
    return MemoryRecord.from_row(unset | row | changes)


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


def test_settings_are_bounded_and_zero_weight_disables() -> None:
    cfg = NeighbourSettings.from_settings({"search.neighbour_window": "99"})
    assert cfg.window == 10
    assert cfg.weight == 0.5
    assert cfg.max_gap == timedelta(minutes=30)
    assert cfg.coherence_full == 0.02
    assert not NeighbourSettings.from_settings({"scoring.neighbour_weight": "0"}).enabled
    assert NeighbourSettings.from_settings({"scoring.neighbour_weight": "x"}).weight == 0.5


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

    from exocortex.retrieval.search.neighbours import id_window

    at = ULID.from_timestamp(NOW.timestamp())
    window = id_window(str(at), timedelta(minutes=30))
    assert window is not None
    low, high = window
    inside = str(ULID.from_timestamp((NOW + timedelta(minutes=29)).timestamp()))
    outside = str(ULID.from_timestamp((NOW - timedelta(minutes=31)).timestamp()))
    assert low < str(at) < high
    assert low < inside < high
    assert not low <= outside <= high
    assert id_window("not-a-ulid", timedelta(minutes=30)) is None
    assert id_window("!1JD3Z8Q6V0000000000000000", timedelta(minutes=1)) is None


def test_the_window_matches_the_ulid_library() -> None:
    import random

    from ulid import ULID

    from exocortex.retrieval.search.neighbours import id_window

    rng = random.Random(3)
    for _ in range(500):
        seed = ULID.from_timestamp(rng.uniform(0, 4_000_000_000))
        gap = timedelta(milliseconds=rng.randint(0, 10_000_000))
        span = int(gap.total_seconds() * 1000)
        low = max(0, seed.milliseconds - span) << 80
        high = ((seed.milliseconds + span + 1) << 80) - 1
        assert id_window(str(seed), gap) == (str(ULID.from_int(low)), str(ULID.from_int(high)))


def _unit(*values: float) -> Vector:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_coherence_is_positive_only_when_neighbours_go_on_with_their_seeds_subject() -> None:
    rng = np.random.default_rng(7)
    topics = [_unit(*rng.normal(size=16)) for _ in range(6)]
    vecs: dict[str, Vector] = {}
    found: dict[str, list[tuple[str, int]]] = {}
    for t, topic in enumerate(topics):
        vecs[f"s{t}"] = topic
        found[f"s{t}"] = []
        for d in (1, 2):
            vecs[f"n{t}{d}"] = _unit(*(topic + 0.3 * rng.normal(size=16)))
            found[f"s{t}"].append((f"n{t}{d}", d))
    # Each neighbour carries on with its seed's subject: clearly coherent.
    assert coherence(found, vecs).overall > 0.3
    # The same neighbours shuffled among the seeds: nothing to tell apart from chance.
    names = [n for near in found.values() for n, _ in near]
    order = rng.permutation(len(names))
    shuffled = {
        seed: [(names[order[2 * i + j]], j + 1) for j in range(2)] for i, seed in enumerate(found)
    }
    assert coherence(shuffled, vecs).overall < 0.05
    assert coherence({"s0": found["s0"]}, vecs).overall == 0.0  # one seed: no comparison


def test_one_coherent_seed_among_unrelated_ones_is_found_on_its_own() -> None:
    rng = np.random.default_rng(11)
    vecs: dict[str, Vector] = {}
    found: dict[str, list[tuple[str, int]]] = {}
    for t in range(12):
        vecs[f"s{t}"] = _unit(*rng.normal(size=16))
        found[f"s{t}"] = []
        for d in (1, 2):
            # Seed 0 is a conversation's turn; the others are notes beside unrelated notes.
            base = vecs["s0"] if t == 0 else _unit(*rng.normal(size=16))
            vecs[f"n{t}{d}"] = _unit(*(base + 0.3 * rng.normal(size=16)))
            found[f"s{t}"].append((f"n{t}{d}", d))
    alike = coherence(found, vecs).per_seed
    assert alike["s0"] > 0.05  # well past coherence_full (0.02): a whole share
    assert max(alike[f"s{t}"] for t in range(1, 12)) < 0.1


def test_a_seed_without_share_passes_nothing() -> None:
    found = {"a": [("n", 1)], "b": [("m", 1)]}
    got = bonuses(found, {"a": 0.2, "b": 0.2}, weight=0.5, shares={"a": 0.5})
    assert set(got) == {"n"}
    assert got["n"].value == 0.5 * 0.5 * 0.2
