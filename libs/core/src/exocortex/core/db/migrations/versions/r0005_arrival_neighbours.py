"""Search passes a strong hit's score on to the memories stored right before and after it.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02

Seeds `scoring.neighbour_weight` (0.3), `search.neighbour_window` (2) and
`search.neighbour_max_gap_minutes` (30), insert-if-missing, and adds the partial index that
finds a root memory's neighbours in arrival (id) order with one short range scan a side.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from exocortex.core.db import setting_seeds

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {
    "scoring.neighbour_weight": "0.3",
    "search.neighbour_window": "2",
    "search.neighbour_max_gap_minutes": "30",
}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_memories_namespace_root_id "
        "ON memories (namespace, id) WHERE parent_id IS NULL AND is_active"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_memories_namespace_root_id")
    setting_seeds.delete_keys(SEEDED)
