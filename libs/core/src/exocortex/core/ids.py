"""Identifiers: ULIDs (sortable by creation time, 26 Crockford base32 characters)."""

from __future__ import annotations

import re

from ulid import ULID

_ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def new_id() -> str:
    return str(ULID())


def is_ulid(value: str) -> bool:
    return bool(_ULID_RE.match(value.upper()))


def new_ids(count: int) -> list[str]:
    """``count`` ULIDs in increasing order. Rows written in one transaction share their
    ``created_at``, and ULIDs made one by one within a millisecond are in random order; these
    keep the order the items came in (search uses arrival order, see retrieval neighbours)."""
    first = int(ULID())
    return [str(ULID.from_int(first + i)) for i in range(count)]
