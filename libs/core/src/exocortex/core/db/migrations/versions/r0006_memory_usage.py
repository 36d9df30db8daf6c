"""Access counts move from `memories` to a narrow `memory_usage` table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03

Every search counts an access for each memory it returns. On `memories` that rewrote a wide
row (the embedding is stored inline, about 2 KB) that rarely fit on its page again, so the
update also wrote a new entry into each of the table's 16 indexes: about 45 buffer pages a
memory served, about as much Postgres CPU as the search itself, on the cores searches share.
On a narrow table with free room on each page the same update stays on its page and touches no
index. Rows are created on first access: a memory never served has none (count 0).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE memory_usage (
            memory_id        text PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
            access_count     integer NOT NULL DEFAULT 0,
            last_accessed_at timestamptz
        ) WITH (fillfactor = 70)
        """
    )
    op.execute(
        """
        INSERT INTO memory_usage (memory_id, access_count, last_accessed_at)
        SELECT id, access_count, last_accessed_at FROM memories
         WHERE access_count > 0 OR last_accessed_at IS NOT NULL
        """
    )
    op.execute("ALTER TABLE memories DROP COLUMN access_count, DROP COLUMN last_accessed_at")


def downgrade() -> None:
    op.execute(
        "ALTER TABLE memories ADD COLUMN access_count integer NOT NULL DEFAULT 0, "
        "ADD COLUMN last_accessed_at timestamptz"
    )
    op.execute(
        """
        UPDATE memories m SET access_count = u.access_count, last_accessed_at = u.last_accessed_at
          FROM memory_usage u WHERE u.memory_id = m.id
        """
    )
    op.execute("DROP TABLE memory_usage")
