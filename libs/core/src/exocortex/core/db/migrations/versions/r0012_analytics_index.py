"""A narrow copy of each active memory's usage columns, so the analytics reports read an index
instead of the whole table; and edit distance in SQL for the tag-health report.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-08

Every analytics report (summary, access distribution, tag and producer quality, the quality
trend and distribution, the decay preview) aggregates over a namespace's active root memories.
A `memories` row carries its embedding and content (about 1.7 KB), so each report read about
150 MB at 100k memories. This partial index holds only the columns the reports use (about 90
bytes a memory), and Postgres answers them with an index-only scan.

Tag health compares tag spellings by edit distance (the original's tag cleanup rule). The
`fuzzystrmatch` extension (in contrib, shipped with every Postgres build, trusted since 13) gives
`levenshtein_less_equal`, which stops as soon as two tags are too far apart: 125,000 pairs of
the 500 most used tags in well under 100 ms, where the same in Python took seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS fuzzystrmatch")
    op.execute(
        "CREATE INDEX IF NOT EXISTS ix_memories_active_roots_usage "
        "ON memories (namespace) "
        "INCLUDE (id, importance, useful_count, created_at, model_id, model_name, agent) "
        "WHERE is_active AND parent_id IS NULL"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_memories_active_roots_usage")
