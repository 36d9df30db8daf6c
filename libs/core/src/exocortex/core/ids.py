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
    ``created_at``, so the ids keep the order the items came in (search uses arrival order, see
    retrieval neighbours). Each is a fresh ULID, like ``new_id``'s: python-ulid hands out
    increasing ids within a millisecond, so ids made later (a batch's chunks) never repeat one
    of these; counting up from a first id did, and the batch insert failed on the key."""
    return sorted(str(ULID()) for _ in range(count))
