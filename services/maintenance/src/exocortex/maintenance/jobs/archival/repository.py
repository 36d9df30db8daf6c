"""SQL of archival: the candidates of a namespace with the reason each would be archived."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row

Conn = psycopg.AsyncConnection[dict[str, Any]]

PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class ArchiveCandidate:
    id: str
    # The row version this candidate was judged at: it is archived only at that version.
    version: int
    namespace: str
    content: str
    importance: float
    access_count: int
    created_at: datetime
    last_accessed_at: datetime | None
    expires_at: datetime | None
    reason: str  # expired | stale | abandoned


async def candidates(
    conn: Conn,
    namespace: str,
    *,
    stale_days: int,
    max_importance: float,
    max_access_count: int,
    abandoned_days: int,
    include_expired: bool,
) -> list[ArchiveCandidate]:
    """Active roots that are expired, stale (low importance, old, rarely used) or abandoned
    (very old, never used). Pinned memories (importance 1.0) are never stale nor abandoned
    (the seed archived them as abandoned); an expiry someone set still applies."""
    async with conn.cursor(row_factory=class_row(ArchiveCandidate)) as cur:
        await cur.execute(
            f"""
            SELECT * FROM (
                SELECT m.id, m.version, m.namespace, left(m.content, {PREVIEW_CHARS}) AS content,
                       m.importance, coalesce(u.access_count, 0) AS access_count, m.created_at,
                       u.last_accessed_at, m.expires_at,
                       CASE
                         WHEN %(expired)s AND m.expires_at <= now() THEN 'expired'
                         WHEN round(m.importance::numeric, 2) >= 1 THEN NULL
                         WHEN m.importance < %(max_importance)s
                              AND m.created_at < now() - make_interval(days => %(stale)s)
                              AND coalesce(u.access_count, 0) < %(max_access)s THEN 'stale'
                         WHEN m.created_at < now() - make_interval(days => %(abandoned)s)
                              AND coalesce(u.access_count, 0) = 0
                              AND m.useful_count = 0 THEN 'abandoned'
                       END AS reason
                  FROM memories m LEFT JOIN memory_usage u ON u.memory_id = m.id
                 WHERE m.namespace = %(ns)s AND m.is_active AND m.parent_id IS NULL
            ) c WHERE reason IS NOT NULL
            ORDER BY created_at, id
            """,
            {
                "ns": namespace,
                "expired": include_expired,
                "max_importance": max_importance,
                "stale": stale_days,
                "max_access": max_access_count,
                "abandoned": abandoned_days,
            },
        )
        return await cur.fetchall()
