"""Late-interaction re-scoring of the head of a search's ranking, off by default.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-16

Seeds `search.rerank_candidates` (0: off) and `scoring.rerank_weight` (0.5), insert-if-missing.
See retrieval's `search/rerank.py` and docs/retrieval.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {"search.rerank_candidates": "0", "scoring.rerank_weight": "0.5"}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
