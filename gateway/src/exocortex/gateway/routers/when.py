"""Dates and times in query parameters and bodies, read in the caller's time zone.

A bare date (``2026-11-29``) means the whole day where the caller lives: as a lower bound it is
that day's first instant, as an upper bound the first instant of the next day (bounds are
exclusive above). A date-time with an offset is taken as given; one without an offset is read in
the caller's zone.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from exocortex.core.domain.names import time_zone
from exocortex.core.errors import InvalidArgument

_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def zone(name: str | None, field: str = "timezone") -> ZoneInfo:
    return time_zone(name, field)


def parse_bound(value: str | None, tz: ZoneInfo, *, upper: bool, field: str) -> datetime | None:
    if value is None or value == "":
        return None
    text = value.strip()
    if _DATE_ONLY.match(text):
        try:
            day = date.fromisoformat(text)
        except ValueError as exc:
            raise InvalidArgument(f"{field} is not a valid date", field=field) from exc
        start = datetime.combine(day, datetime.min.time(), tz)
        return start + timedelta(days=1) if upper else start
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidArgument(
            f"{field} must be a date (YYYY-MM-DD) or an ISO 8601 date-time", field=field
        ) from exc
    return when if when.tzinfo else when.replace(tzinfo=tz)
