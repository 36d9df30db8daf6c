"""Identifiers: ULIDs (sortable by creation time, 26 Crockford base32 characters)."""

from __future__ import annotations

import re

from ulid import ULID

_ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def new_id() -> str:
    return str(ULID())


def is_ulid(value: str) -> bool:
    return bool(_ULID_RE.match(value.upper()))
