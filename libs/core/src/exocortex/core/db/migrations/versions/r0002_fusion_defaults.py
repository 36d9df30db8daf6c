"""Fusion defaults: RRF k 5, vector and keyword weights 0.50 each, graph weight 0.05.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29

Measured on a conversational benchmark (docs/benchmarks/locomo.md): a smaller k lets the top of
each list count, equal weights let the two indexes complement each other, and the graph list
(mostly ties and similarity links that repeat the vector signal) only adds noise at 0.10. Only
rows still holding the old default change; a value an operator set stays as it is.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# key: (old default, new default). Spelled out here: a migration must not follow later edits.
CHANGES: dict[str, tuple[str, str]] = {
    "scoring.rrf_k": ("15", "5"),
    "scoring.vector_weight": ("0.40", "0.50"),
    "scoring.fts_weight": ("0.60", "0.50"),
    "scoring.graph_weight": ("0.10", "0.05"),
}


def _move(pairs: list[tuple[str, str, str]]) -> None:
    op.get_bind().execute(
        sa.text(
            "UPDATE settings SET value = :new, updated_at = now() WHERE key = :key AND value = :old"
        ),
        [{"key": key, "old": old, "new": new} for key, old, new in pairs],
    )


def upgrade() -> None:
    _move([(key, old, new) for key, (old, new) in CHANGES.items()])


def downgrade() -> None:
    _move([(key, new, old) for key, (old, new) in CHANGES.items()])
