"""Ids made for a batch keep the items' order and never collide with ids made right after
(a bulk import names its memories first, then their chunks)."""

from __future__ import annotations

from exocortex.core.ids import is_ulid, new_id, new_ids


def test_batch_ids_are_ordered_and_unique() -> None:
    ids = new_ids(500)
    assert ids == sorted(ids)
    assert len(set(ids)) == 500
    assert all(is_ulid(i) for i in ids)


def test_ids_made_after_a_batch_never_repeat_one_of_it() -> None:
    for _ in range(200):
        batch = new_ids(40)
        later = [new_id() for _ in range(5)]
        assert not set(batch) & set(later)
        assert min(later) > max(batch)


def test_floor_id_bounds_the_ids_of_a_moment() -> None:
    from datetime import UTC, datetime, timedelta

    from ulid import ULID

    from exocortex.core.ids import floor_id

    at = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
    made = str(ULID.from_datetime(at))
    assert floor_id(at) <= made
    assert floor_id(at + timedelta(milliseconds=1)) > made
    assert floor_id(at - timedelta(days=1)) < floor_id(at)
