"""Coverage-aware ordering of the head of a search's ranking, off by default.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06

Seeds `scoring.coverage_weight` (0: off) and `search.coverage_similarity` (0.5),
insert-if-missing. See retrieval's `search/coverage.py` and docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {"scoring.coverage_weight": "0", "search.coverage_similarity": "0.5"}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
