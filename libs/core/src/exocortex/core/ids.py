"""Identifiers: ULIDs (sortable by creation time, 26 Crockford base32 characters)."""

from __future__ import annotations

import re
from datetime import datetime

from ulid import ULID

_ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def new_id() -> str:
    return str(ULID())


def is_ulid(value: str) -> bool:
    return bool(_ULID_RE.match(value.upper()))


def new_ids(count: int) -> list[str]:
    """``count`` ULIDs in increasing order. Rows written in one transaction share their
    ``created_at``, so the ids keep the order the items came in (search uses arrival order, see
    retrieval neighbours). Each is a fresh ULID, like ``new_id``'s: python-ulid hands out
    increasing ids within a millisecond, so ids made later (a batch's chunks) never repeat one
    of these; counting up from a first id did, and the batch insert failed on the key."""
    return sorted(str(ULID()) for _ in range(count))


def floor_id(at: datetime) -> str:
    """The lowest ULID of the millisecond ``at``: ids compare as arrival times, so ``id >=
    floor_id(t)`` bounds an index range scan by time."""
    millis = max(0, int(at.timestamp() * 1000))
    return str(ULID(millis.to_bytes(6, "big") + bytes(10)))
