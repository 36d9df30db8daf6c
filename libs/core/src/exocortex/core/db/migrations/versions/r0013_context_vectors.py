"""Contextual vectors: each memory may carry a second vector, embedded together with the memory
stored just before it, that search adds to its own similarity.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-15

Adds `memories.context_embedding` (written by the enrichment worker when
`enrichment.context_vectors` is on; NULL for memories with no previous memory in their stretch
of work, and for those enriched without it: search then counts their own similarity for it) and
seeds `enrichment.context_vectors` (false) and `scoring.context_weight` (0), insert-if-missing.
Both are off by default: measured on LoCoMo, contextual vectors add nothing beside arrival
neighbours and cost a little where arrival order means nothing (docs/benchmarks/locomo.md).
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
SEEDED: dict[str, str] = {"scoring.context_weight": "0", "enrichment.context_vectors": "false"}


def upgrade() -> None:
    op.execute("ALTER TABLE memories ADD COLUMN IF NOT EXISTS context_embedding bytea")
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
    op.execute("ALTER TABLE memories DROP COLUMN IF EXISTS context_embedding")
