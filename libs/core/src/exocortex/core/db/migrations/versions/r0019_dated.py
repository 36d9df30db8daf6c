"""Questions that ask when prefer the head's memories that name a time.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06

Seeds `scoring.dated_weight` (0.2; 0 turns it off), insert-if-missing. See retrieval's
`search/dated.py` and docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {"scoring.dated_weight": "0.2"}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
