"""Token vectors stored out of line without a compression attempt.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-07

A memory's token vectors (``memory_tokens.tokens``, about 9 KB of int8 for a short note) do not
compress: with the default storage Postgres tried pglz on every insert before storing them out
of line anyway. EXTERNAL skips the attempt (measured on an import of short notes: Postgres's
CPU a memory 0.49 -> 0.34 ms). Rows written before keep their form; both read the same.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE memory_tokens ALTER COLUMN tokens SET STORAGE EXTERNAL")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_tokens ALTER COLUMN tokens SET STORAGE EXTENDED")
