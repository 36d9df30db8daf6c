"""The SQL of the search recorder: a batch of searches' side effects written with one
statement per kind in one transaction, and explicit usefulness feedback."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.db.arrays import TextArray

Row = dict[str, Any]
Pool = AsyncConnectionPool[psycopg.AsyncConnection[Row]]

# One statement per kind for a whole batch of searches: a memory served by several searches is
# counted once per search, and its last access is the latest of them. Counts live in the narrow
# memory_usage table, where the update stays on its page (see migration 0006); a memory deleted
# since the search is skipped.
_ACCESS_SQL = """
WITH served(id, n, at) AS (
    SELECT * FROM unnest(%(ids)s::text[], %(counts)s::int[], %(ats)s::timestamptz[])
), hit AS (
    INSERT INTO memory_usage AS u (memory_id, access_count, last_accessed_at)
    SELECT s.id, s.n, s.at FROM served s JOIN memories m ON m.id = s.id
        ON CONFLICT (memory_id) DO UPDATE
       SET access_count = u.access_count + EXCLUDED.access_count,
           last_accessed_at = greatest(coalesce(u.last_accessed_at, EXCLUDED.last_accessed_at),
                                       EXCLUDED.last_accessed_at)
 RETURNING u.memory_id AS id
)
INSERT INTO access_log (memory_id, query, kind, accessed_at)
SELECT l.id, l.query, 'search', l.at
  FROM unnest(%(log_ids)s::text[], %(log_queries)s::text[], %(log_ats)s::timestamptz[])
       AS l(id, query, at)
 WHERE l.id IN (SELECT id FROM hit)
"""

# Impressions, and the fetches that came before their search was recorded (see retrieval's
# reads): a pending fetch made after a memory was first served in the batch, and within five
# minutes after it was last served, counts as useful once and is consumed. The impression is
# still kept when the memory was served again after that fetch: a later fetch may use it.
_IMPRESSION_SQL = """
WITH served(id, first_at, last_at) AS (
    SELECT s.id, s.first_at, s.last_at
      FROM unnest(%(ids)s::text[], %(firsts)s::timestamptz[], %(ats)s::timestamptz[])
           AS s(id, first_at, last_at)
      JOIN memories m ON m.id = s.id
), used AS (
    DELETE FROM pending_fetches f USING served s
     WHERE f.memory_id = s.id
       AND f.fetched_at >= s.first_at
       AND f.fetched_at <= s.last_at + interval '5 minutes'
 RETURNING f.memory_id, f.fetched_at
), counted AS (
    UPDATE memories m SET useful_count = m.useful_count + 1
      FROM used u
     WHERE m.id = u.memory_id
)
INSERT INTO search_impressions (memory_id, served_at)
SELECT s.id, s.last_at
  FROM served s LEFT JOIN used u ON u.memory_id = s.id
 WHERE u.memory_id IS NULL OR s.last_at > u.fetched_at
ON CONFLICT (memory_id) DO UPDATE
   SET served_at = greatest(search_impressions.served_at, EXCLUDED.served_at)
"""

# A pending fetch older than this can no longer be matched: an impression served up to five
# minutes before it would have to be recorded more than ten minutes late.
_STALE_FETCHES_SQL = """
DELETE FROM pending_fetches WHERE fetched_at < now() - interval '15 minutes'
"""

_MISS_SQL = """
INSERT INTO search_misses (namespace, query, result_count, max_score, filters, created_at)
VALUES (%s, %s, 0, %s, %s::jsonb, %s)
"""

_CO_RETRIEVAL_SQL = """
INSERT INTO co_retrievals (namespace, query_hash, memory_ids, result_count, created_at)
VALUES (%s, %s, %s, %s, %s)
"""


@dataclass
class SearchBatch:
    """A batch of searches' side effects, gathered so each kind is one statement."""

    access_counts: Counter[str] = field(default_factory=Counter)
    last_access: dict[str, datetime] = field(default_factory=dict)
    access_log: list[tuple[str, str, datetime]] = field(default_factory=list)
    # When each served memory was last and first served in the batch.
    impressions: dict[str, datetime] = field(default_factory=dict)
    first_served: dict[str, datetime] = field(default_factory=dict)
    misses: list[tuple[Any, ...]] = field(default_factory=list)
    co_retrievals: list[tuple[Any, ...]] = field(default_factory=list)


async def write_batch(pool: Pool, batch: SearchBatch) -> None:
    async with pool.connection() as conn, conn.transaction():
        if batch.access_counts:
            ids = list(batch.access_counts)
            await conn.execute(
                _ACCESS_SQL,
                {
                    "ids": TextArray(ids),
                    "counts": [batch.access_counts[i] for i in ids],
                    "ats": [batch.last_access[i] for i in ids],
                    "log_ids": TextArray(e[0] for e in batch.access_log),
                    "log_queries": TextArray(e[1] for e in batch.access_log),
                    "log_ats": [e[2] for e in batch.access_log],
                },
            )
        if batch.impressions:
            ids = list(batch.impressions)
            await conn.execute(
                _IMPRESSION_SQL,
                {
                    "ids": TextArray(ids),
                    "firsts": [batch.first_served[i] for i in ids],
                    "ats": [batch.impressions[i] for i in ids],
                },
            )
            await conn.execute(_STALE_FETCHES_SQL)
        async with conn.cursor() as cur:
            if batch.misses:
                await cur.executemany(_MISS_SQL, batch.misses)
            if batch.co_retrievals:
                await cur.executemany(_CO_RETRIEVAL_SQL, batch.co_retrievals)


async def record_feedback(pool: Pool, ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """Explicit usefulness: +1 for each existing id (once per call, even if repeated)."""
    unique = list(dict.fromkeys(ids))
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE memories SET useful_count = useful_count + 1 WHERE id = ANY(%s) RETURNING id",
            (unique,),
        )
        found = {r["id"] for r in await cur.fetchall()}
    return [i for i in unique if i in found], [i for i in unique if i not in found]
