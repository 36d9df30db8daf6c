"""datetime ↔ protobuf Timestamp, for servicers and row → proto conversions."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp


def to_stamp(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def from_field(message: Any, name: str) -> datetime | None:
    """The datetime of an optional Timestamp field, or None when it is unset."""
    if not message.HasField(name):
        return None
    stamp: Timestamp = getattr(message, name)
    return stamp.ToDatetime(tzinfo=UTC)


def set_times(message: Any, row: dict[str, Any], names: tuple[str, ...]) -> None:
    """Copy each non-null datetime column of ``row`` into the same-named Timestamp field."""
    for name in names:
        stamp = to_stamp(row.get(name))
        if stamp is not None:
            getattr(message, name).CopyFrom(stamp)
