"""Every stored setting changes behaviour: three settings of the original are removed, the RRF
threshold is read (at 0, the threshold it had in effect), and backups' retention is a setting.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-04

* `dedup.candidate_pool`, `observability.log_events` and `server.port` were stored and listed
  but read by nothing; their rows go (PATCH naming them answers 400 with the reason, from
  `core.domain.setting_schema.REMOVED`).
* `scoring.rrf_min_score` is now the RRF-mode threshold. Its old default (0.001) was never in
  effect (the threshold was 0), so a row still at it moves to 0 and ranking stays the same; a
  value an operator set stays as it is.
* `backup.max_count` (7): scheduled backups kept, read at each scheduled backup.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from exocortex.core.db import setting_seeds

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Spelled out here: a migration must not follow later edits of DEFAULT_SETTINGS.
REMOVED: dict[str, str] = {
    "dedup.candidate_pool": "200",
    "observability.log_events": "false",
    "server.port": "3210",
}
SEEDED: dict[str, str] = {"backup.max_count": "7"}
RRF_MIN_SCORE = ("scoring.rrf_min_score", "0.001", "0")


def _move(key: str, old: str, new: str) -> None:
    op.get_bind().execute(
        sa.text(
            "UPDATE settings SET value = :new, updated_at = now() WHERE key = :key AND value = :old"
        ),
        {"key": key, "old": old, "new": new},
    )


def upgrade() -> None:
    setting_seeds.delete_keys(REMOVED)
    setting_seeds.insert_missing(SEEDED)
    key, old, new = RRF_MIN_SCORE
    _move(key, old, new)


def downgrade() -> None:
    key, old, new = RRF_MIN_SCORE
    _move(key, new, old)
    setting_seeds.delete_keys(SEEDED)
    setting_seeds.insert_missing(REMOVED)
