"""Enrichment thresholds as settings: the worker reads them at run time, so an operator can tune
them with PATCH /api/settings instead of a release.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

The values are the ones the worker used as code constants. Insert-if-missing: a database that
already has a key (set by hand before this migration) keeps its value.
"""

from __future__ import annotations

from collections.abc import Sequence

from exocortex.core.db import setting_seeds

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
SEEDED: dict[str, str] = {
    "enrichment.entity_min_confidence": "0.5",
    "enrichment.neighbour_limit": "10",
    "enrichment.relation_threshold": "0.75",
    "enrichment.relation_limit": "5",
    "enrichment.contradiction_threshold": "0.7",
    "enrichment.contradiction_negation_overlap": "0.6",
    "enrichment.goal_threshold": "0.55",
}


def upgrade() -> None:
    setting_seeds.insert_missing(SEEDED)


def downgrade() -> None:
    setting_seeds.delete_keys(SEEDED)
