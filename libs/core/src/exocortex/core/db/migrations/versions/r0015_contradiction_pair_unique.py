"""One contradiction row per pair of memories, whatever the order and the status.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02

Enrichment (at store time) and the maintenance job (batch detection) both record candidates.
Each checked "is this pair known?" before inserting, but two transactions running at once
could both see no row and both insert: a pair a user had already resolved came back as a new
pending row once the slower transaction committed. A unique index on the unordered pair makes
the second insert wait for the first and then do nothing (`ON CONFLICT DO NOTHING`).

Existing duplicates are folded first: the row a person acted on (resolved or dismissed) is
kept over a pending one, then the oldest.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        DELETE FROM contradictions c
         USING (SELECT id,
                       row_number() OVER (
                           PARTITION BY LEAST(memory_a_id, memory_b_id),
                                        GREATEST(memory_a_id, memory_b_id)
                           ORDER BY (status = 'pending'), created_at, id) AS rank
                  FROM contradictions) ranked
         WHERE c.id = ranked.id AND ranked.rank > 1;
        CREATE UNIQUE INDEX ux_contradictions_pair
            ON contradictions (LEAST(memory_a_id, memory_b_id),
                               GREATEST(memory_a_id, memory_b_id));
        """
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ux_contradictions_pair;")
