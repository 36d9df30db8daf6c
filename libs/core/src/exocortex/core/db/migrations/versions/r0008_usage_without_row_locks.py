"""Usage records stop locking the memory they count; a trigger removes them with the memory.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04

Every search writes usage records for the memories it served: an `access_log` row each, and
upserts into `memory_usage` and `search_impressions`. Each of those tables had a foreign key to
`memories`, and Postgres checks a new row's key by locking the referenced `memories` row (FOR
KEY SHARE), which writes the lock into that wide row's page: measured on a batch of 80 served
memories at 100k, the checks were 45% of the statements' time (3.7-7 of 8.4-14 ms), and every
batch dirtied about 60 `memories` pages, each a full-page image in the WAL after a checkpoint.
The recorder only inserts rows for memories it has just found in `memories` (it joins them), so
the keys were checked twice. What the foreign keys still did, removing the records when a memory
is deleted for good, a statement-level trigger now does. A record written while its memory is
being deleted can outlive it; nothing reads records without their memory.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_TABLES = ("access_log", "memory_usage", "search_impressions")


def upgrade() -> None:
    for table in _TABLES:
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_memory_id_fkey")
    op.execute(
        """
        CREATE FUNCTION forget_usage_of_deleted_memories() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM access_log a USING gone g WHERE a.memory_id = g.id;
            DELETE FROM memory_usage u USING gone g WHERE u.memory_id = g.id;
            DELETE FROM search_impressions s USING gone g WHERE s.memory_id = g.id;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER memories_deleted_forget_usage
        AFTER DELETE ON memories REFERENCING OLD TABLE AS gone
        FOR EACH STATEMENT EXECUTE FUNCTION forget_usage_of_deleted_memories()
        """
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS memories_deleted_forget_usage ON memories")
    op.execute("DROP FUNCTION IF EXISTS forget_usage_of_deleted_memories()")
    for table in _TABLES:
        # Records that outlived their memory would fail the key: they go first.
        op.execute(
            f"DELETE FROM {table} t WHERE NOT EXISTS "
            f"(SELECT 1 FROM memories m WHERE m.id = t.memory_id)"
        )
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_memory_id_fkey FOREIGN KEY (memory_id) "
            "REFERENCES memories (id) ON DELETE CASCADE"
        )
