"""Who put an archived memory in the trash: `memories.archived_by` (person | automation).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-04

The trash purge (maintenance job `trash-purge`, on the `trash.auto_purge_days` clock) deletes
only what a person put in the trash; what automation archived (stale, abandoned, expired,
consolidated, superseded) stays restorable until a person empties it. The column is kept by a
trigger, so no write path has to remember it:

* a row that becomes inactive gets `automation` when the statement says so (the maintenance
  jobs do) or when it is superseded or consolidated, else `person` (ingest's archive, PATCH
  `is_active: false`, bulk updates: every one of them a person's act);
* a row superseded after it was archived (ingest archives a duplicate, then points it at its
  successor) becomes `automation`;
* a row made active again loses its mark; an archived row inserted (a restore) is `automation`,
  since nothing says a person trashed it.

Rows archived before this migration: `automation` when a job's audit trail archived them or they
are superseded or consolidated, else `person`.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE memories ADD COLUMN archived_by text
            CONSTRAINT ck_memories_archived_by CHECK (archived_by IN ('person', 'automation'));

        UPDATE memories m
           SET archived_by = CASE
                 WHEN m.superseded_by IS NOT NULL OR m.consolidated_into IS NOT NULL
                      OR EXISTS (SELECT 1 FROM memory_audit a
                                  WHERE a.memory_id = coalesce(m.parent_id, m.id)
                                    AND a.action IN ('archived', 'consolidated',
                                                     'contradiction-resolved'))
                 THEN 'automation' ELSE 'person' END
         WHERE NOT m.is_active;

        CREATE FUNCTION memories_archived_by() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NEW.is_active THEN
                NEW.archived_by := NULL;
            ELSIF TG_OP = 'INSERT' THEN
                NEW.archived_by := coalesce(NEW.archived_by, 'automation');
            ELSIF OLD.is_active THEN
                IF NEW.archived_by IS NULL THEN
                    NEW.archived_by := CASE
                        WHEN NEW.superseded_by IS NOT NULL OR NEW.consolidated_into IS NOT NULL
                        THEN 'automation' ELSE 'person' END;
                END IF;
            ELSIF NEW.superseded_by IS NOT NULL AND OLD.superseded_by IS NULL THEN
                NEW.archived_by := 'automation';
            END IF;
            RETURN NEW;
        END;
        $$;

        CREATE TRIGGER tg_memories_archived_by
            BEFORE INSERT OR UPDATE OF is_active, superseded_by, consolidated_into, archived_by
            ON memories FOR EACH ROW EXECUTE FUNCTION memories_archived_by();

        CREATE INDEX ix_memories_trash ON memories (namespace, updated_at)
            WHERE NOT is_active AND parent_id IS NULL;
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP INDEX ix_memories_trash;
        DROP TRIGGER tg_memories_archived_by ON memories;
        DROP FUNCTION memories_archived_by();
        ALTER TABLE memories DROP COLUMN archived_by;
        """
    )
