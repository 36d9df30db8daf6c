"""A memory's token vectors, made once when it is embedded, for late-interaction re-scoring.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-06

`memory_tokens` holds one row per memory whose token vectors the embedding service gave with its
vector (the same run of the model): int8 rows (see `core.domain.token_vectors`), the model
fingerprint they belong to and their width. A table of its own, not a column, so no existing
read of `memories` carries the bytes. The row goes with the memory (ON DELETE CASCADE) and is
deleted by a trigger the moment the memory's content or embedding model changes, whatever path
changes it (edit, merge, redaction, restore, re-embedding); the writer of the new content puts
new ones (see ingest's `store/tokens.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        """
        CREATE TABLE memory_tokens (
            memory_id  text PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            model      text NOT NULL,
            dimensions integer NOT NULL CHECK (dimensions > 0),
            tokens     bytea NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE FUNCTION memory_tokens_stale() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM memory_tokens WHERE memory_id = NEW.id;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER memory_tokens_stale
        AFTER UPDATE OF content, embedding_model ON memories
        FOR EACH ROW
        WHEN (OLD.content IS DISTINCT FROM NEW.content
              OR OLD.embedding_model IS DISTINCT FROM NEW.embedding_model)
        EXECUTE FUNCTION memory_tokens_stale()
        """
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS memory_tokens_stale ON memories")
    op.execute("DROP FUNCTION IF EXISTS memory_tokens_stale()")
    op.execute("DROP TABLE IF EXISTS memory_tokens")
