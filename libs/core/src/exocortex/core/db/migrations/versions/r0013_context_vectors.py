"""Contextual vectors: each memory may carry a second vector, embedded together with the memory
stored just before it, that search adds to its own similarity.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-15

Adds `memories.context_embedding` (written by the enrichment worker; NULL for memories with no
previous memory in their stretch of work, and for those stored before this revision: search
then counts their own similarity for it, so nothing changes for them) and seeds
`scoring.context_weight` (1.0), insert-if-missing.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from exocortex.core.db import setting_seeds

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {"scoring.context_weight": "1.0"}


def upgrade() -> None:
    op.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS context_embedding bytea")
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
    op.execute("ALTER TABLE memories DROP COLUMN IF EXISTS context_embedding")
