"""SQL of the repair job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import class_row

from exocortex.core.db.arrays import TextArray
from exocortex.core.domain.metadata import BENCHMARK_TAG
from exocortex.maintenance.events import Changed

Conn = psycopg.AsyncConnection[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class ToEmbed:
    id: str
    # The version whose content is embedded: the vector is saved only at that version.
    version: int
    content: str
    reason: str  # missing | stale_model


async def to_embed(conn: Conn, fingerprint: str, limit: int, stale: bool) -> list[ToEmbed]:
    """Active rows with no vector that should have one (not a chunked parent, whose chunks
    carry the vectors, nor a benchmark item), and, with ``stale``, rows embedded by another
    model than the one running now."""
    async with conn.cursor(row_factory=class_row(ToEmbed)) as cur:
        await cur.execute(
            """
            SELECT m.id, m.version, m.content,
                   CASE WHEN m.embedding IS NULL THEN 'missing' ELSE 'stale_model' END AS reason
              FROM memories m
             WHERE m.is_active
               AND ((m.embedding IS NULL
                     AND NOT EXISTS (SELECT 1 FROM memories c WHERE c.parent_id = m.id)
                     AND NOT EXISTS (SELECT 1 FROM memory_tags t
                                      WHERE t.memory_id = m.id AND t.tag = %s))
                    OR (%s AND m.embedding IS NOT NULL
                        AND m.embedding_model IS DISTINCT FROM %s))
             ORDER BY m.id LIMIT %s
            """,
            (BENCHMARK_TAG, stale, fingerprint, limit),
        )
        return await cur.fetchall()


async def save_vectors(
    conn: Conn, rows: Sequence[tuple[str, int, bytes]], model: str, dim: int
) -> list[Changed]:
    """Store each ``(id, version read, vector)`` while the row is still at that version: the
    vector was computed from the content read then, so a row edited since is left for the
    next run instead of getting a vector of its old text. A contextual vector made by another
    model is cleared (search then counts the memory's own similarity in its place)."""
    cur = await conn.execute(
        """
        UPDATE memories m SET embedding = v.embedding, embedding_model = %s, embedding_dim = %s,
               context_embedding = NULL, updated_at = now(), version = m.version + 1
          FROM unnest(%s::text[], %s::bigint[], %s::bytea[]) AS v(id, version, embedding)
         WHERE m.id = v.id AND m.version = v.version AND m.is_active
        RETURNING m.id, m.version, m.namespace
        """,
        (
            model,
            dim,
            TextArray([r[0] for r in rows]),
            [r[1] for r in rows],
            [r[2] for r in rows],
        ),
    )
    return [Changed(r["id"], int(r["version"]), r["namespace"]) for r in await cur.fetchall()]


async def prune_outbox(conn: Conn, days: int, dry_run: bool) -> int:
    """Published events older than ``days`` (JetStream has them; the outbox only needs the
    unpublished ones)."""
    where = "published_at IS NOT NULL AND published_at < now() - make_interval(days => %s)"
    if dry_run:
        cur = await conn.execute(f"SELECT count(*) AS n FROM outbox WHERE {where}", (days,))
        row = await cur.fetchone()
        return int(row["n"]) if row else 0
    cur = await conn.execute(f"DELETE FROM outbox WHERE {where}", (days,))
    return cur.rowcount


@dataclass(frozen=True, slots=True)
class WithoutTokens:
    id: str
    content: str


async def without_tokens(conn: Conn, fingerprint: str, limit: int) -> list[WithoutTokens]:
    """Active roots embedded whole by the running model that keep no token vectors (stored
    before they were kept, restored from a backup, merged, imported), oldest first."""
    async with conn.cursor(row_factory=class_row(WithoutTokens)) as cur:
        await cur.execute(
            """
            SELECT m.id, m.content
              FROM memories m
             WHERE m.is_active AND m.parent_id IS NULL AND m.embedding IS NOT NULL
               AND m.embedding_model = %s
               AND NOT EXISTS (SELECT 1 FROM memory_tokens t WHERE t.memory_id = m.id)
             ORDER BY m.id LIMIT %s
            """,
            (fingerprint, limit),
        )
        return await cur.fetchall()
