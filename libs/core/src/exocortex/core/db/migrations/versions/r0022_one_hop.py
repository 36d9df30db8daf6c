"""One-hop expansion of a search's first hits through their links and entities, off by default.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06

Seeds `scoring.expand_weight` (0: off), `search.expand_seeds` (5) and `search.expand_limit`
(10), insert-if-missing. See retrieval's `search/hops.py` and docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {
    "scoring.expand_weight": "0",
    "search.expand_seeds": "5",
    "search.expand_limit": "10",
}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
