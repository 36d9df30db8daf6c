"""What the maintenance jobs keep: run parameters and progress, an audit trail of automated
changes to memories, per-memory importance marks, and the namespace of each consolidation.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

* `job_runs` gains `params`, `progress` (polled while a run goes on), `namespace` and `trigger`
  (api | schedule).
* `memory_audit`: one row per change a job made to a memory (superseded by a consolidation,
  archived as stale, importance moved, ...), with the job run that made it. No foreign key on
  the memory: the trail outlives a memory someone deletes by hand.
* `importance_marks`: what the importance job already applied to a memory (the access count it
  boosted at, when it last decayed it, whether the graph boost was given), so a second run in a
  row changes nothing (the seed's graph boost crept every memory to 0.9).
* `consolidations.namespace`, so the history lists a namespace's consolidations only.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        ALTER TABLE job_runs
            ADD COLUMN params    jsonb NOT NULL DEFAULT '{}',
            ADD COLUMN progress  jsonb NOT NULL DEFAULT '{}',
            ADD COLUMN namespace text,
            ADD COLUMN trigger   text NOT NULL DEFAULT 'api';
        CREATE INDEX ix_job_runs_started_at ON job_runs (started_at DESC);

        CREATE TABLE memory_audit (
            id         bigserial PRIMARY KEY,
            memory_id  text NOT NULL,
            namespace  text NOT NULL,
            action     text NOT NULL,
            job_run_id bigint REFERENCES job_runs (id) ON DELETE SET NULL,
            detail     jsonb NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE INDEX ix_memory_audit_memory_id ON memory_audit (memory_id);
        CREATE INDEX ix_memory_audit_created_at ON memory_audit (created_at);

        CREATE TABLE importance_marks (
            memory_id         text PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            boosted_at_access integer,
            decayed_at        timestamptz,
            graph_boosted     boolean NOT NULL DEFAULT false
        );

        ALTER TABLE consolidations ADD COLUMN namespace text;
        CREATE INDEX ix_consolidations_namespace_created_at
            ON consolidations (namespace, created_at);
        CREATE INDEX ix_contradictions_status_created_at
            ON contradictions (status, created_at);
        """
    )


def downgrade() -> None:
    op.execute(
        """
        DROP INDEX IF EXISTS ix_contradictions_status_created_at;
        DROP INDEX IF EXISTS ix_consolidations_namespace_created_at;
        ALTER TABLE consolidations DROP COLUMN namespace;
        DROP TABLE importance_marks;
        DROP TABLE memory_audit;
        DROP INDEX IF EXISTS ix_job_runs_started_at;
        ALTER TABLE job_runs
            DROP COLUMN params, DROP COLUMN progress, DROP COLUMN namespace, DROP COLUMN trigger;
        """
    )
