"""Dedup keeps a near duplicate's wording as a variant of the memory it reuses.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02

`dedup.keep_variants` (on) and `dedup.max_variants` (20 a memory). Insert-if-missing: a database
that already has a key keeps its value.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {
    "dedup.keep_variants": "true",
    "dedup.max_variants": "20",
}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
