"""A fetch that comes before its search's impression is recorded still counts as useful.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05

Implicit usefulness: fetching a memory within five minutes after a search served it counts once.
The maintenance service records a search's impressions from the `search.performed` event a
moment after the search (it batches them), so a client that fetches a result right away used to
find no impression yet, and the use was lost. Such a fetch is now kept in `pending_fetches`, and
the recorder counts it when it records an impression served before it. One row per memory (the
latest unmatched fetch), so the table never outgrows `memories`; the recorder drops rows too old
to match.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The trigger function of 0008, and the same with the new table.
_FORGET = """
CREATE OR REPLACE FUNCTION forget_usage_of_deleted_memories() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM access_log a USING gone g WHERE a.memory_id = g.id;
    DELETE FROM memory_usage u USING gone g WHERE u.memory_id = g.id;
    DELETE FROM search_impressions s USING gone g WHERE s.memory_id = g.id;{extra}
    RETURN NULL;
END
$$
"""
_FORGET_FETCHES = "\n    DELETE FROM pending_fetches f USING gone g WHERE f.memory_id = g.id;"


def upgrade() -> None:
    # No foreign key, like the other usage records (see 0008): the trigger removes the rows.
    op.execute(
        """
        CREATE TABLE pending_fetches (
            memory_id text PRIMARY KEY,
            fetched_at timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_pending_fetches_fetched_at ON pending_fetches (fetched_at)")
    op.execute(_FORGET.format(extra=_FORGET_FETCHES))


def downgrade() -> None:
    op.execute(_FORGET.format(extra=""))
    op.execute("DROP TABLE IF EXISTS pending_fetches")
