"""Dates in requests mean the caller's whole day."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from exocortex.core.errors import InvalidArgument
from exocortex.gateway.routers.when import parse_bound, zone


def test_a_bare_date_is_the_whole_day_in_the_zone() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    low = parse_bound("2026-01-16", tokyo, upper=False, field="after")
    high = parse_bound("2026-01-16", tokyo, upper=True, field="before")
    assert low == datetime(2026, 1, 15, 15, tzinfo=UTC)
    assert high == datetime(2026, 1, 16, 15, tzinfo=UTC)


def test_date_times_keep_their_offset_or_take_the_zone() -> None:
    la = ZoneInfo("America/Los_Angeles")
    assert parse_bound("2026-01-16T10:00:00Z", la, upper=False, field="after") == datetime(
        2026, 1, 16, 10, tzinfo=UTC
    )
    naive = parse_bound("2026-01-16T10:00:00", la, upper=False, field="after")
    assert naive == datetime(2026, 1, 16, 18, tzinfo=UTC)
    assert parse_bound(None, la, upper=True, field="before") is None


def test_bad_input_names_the_field() -> None:
    with pytest.raises(InvalidArgument) as bad:
        parse_bound("next week", ZoneInfo("UTC"), upper=False, field="after")
    assert bad.value.field == "after"
    with pytest.raises(InvalidArgument) as bad_zone:
        zone("Mars/Base")
    assert bad_zone.value.field == "timezone"
