"""Dense pseudo-relevance feedback (one more vector search for the query moved toward its first
hits), off by default.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07

Seeds `scoring.feedback_weight` (0: off), `search.feedback_seeds` (3) and `search.feedback_mix`
(1), insert-if-missing. See retrieval's `search/feedback.py` and docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {
    "scoring.feedback_weight": "0",
    "search.feedback_seeds": "3",
    "search.feedback_mix": "1",
}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
