"""Arrival neighbours are guarded by the coherence of the stored vectors, at a higher weight.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

Neighbour credit now passes only where the memory stored next goes on with its seed's subject
(`search.neighbour_coherence_full`, seeded insert-if-missing), and with that guard the weight
was chosen again: `scoring.neighbour_weight` 0.5 instead of 0.3. A store still at the old
default moves to the new one; a value someone set to anything else is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from exocortex.core.db import setting_seeds

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {"search.neighbour_coherence_full": "0.02"}
WEIGHT = "scoring.neighbour_weight"
OLD_WEIGHT, NEW_WEIGHT = "0.3", "0.5"


def _move_weight(before: str, after: str) -> None:
    op.get_bind().execute(
        sa.text("UPDATE settings SET value = :after WHERE key = :key AND value = :before"),
        {"key": WEIGHT, "before": before, "after": after},
    )


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)
    _move_weight(OLD_WEIGHT, NEW_WEIGHT)


def downgrade() -> None:
    _move_weight(NEW_WEIGHT, OLD_WEIGHT)
    setting_seeds.delete_keys(SEEDED)
