"""Records the side effects of searches, off the search's hot path.

Consumes `search.performed` (durable `maintenance-search-recorder`) and, per batch in one
transaction: access counts and the access log (not for compact searches, which only peek),
search impressions (for implicit usefulness), zero-result queries and co-retrievals.

Delivery is at-least-once: a batch redelivered after a crash counts its accesses again, which
only nudges a ranking signal; nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

import psycopg
from nats.aio.msg import Msg
from psycopg_pool import AsyncConnectionPool

from exocortex.core.logging import get_logger
from exocortex.proto.v1 import events_pb2

log = get_logger(__name__)

Row = dict[str, Any]
CO_RETRIEVAL_TOP = 10

_ACCESS_SQL = """
WITH hit AS (
    UPDATE memories SET access_count = access_count + 1,
                        last_accessed_at = greatest(coalesce(last_accessed_at, %(at)s), %(at)s)
     WHERE id = ANY(%(ids)s)
 RETURNING id
)
INSERT INTO access_log (memory_id, query, kind, accessed_at)
SELECT id, %(query)s, 'search', %(at)s FROM hit
"""

_IMPRESSION_SQL = """
INSERT INTO search_impressions (memory_id, served_at)
SELECT id, %(at)s FROM memories WHERE id = ANY(%(ids)s)
ON CONFLICT (memory_id) DO UPDATE
   SET served_at = greatest(search_impressions.served_at, EXCLUDED.served_at)
"""


class SearchRecorder:
    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]) -> None:
        self._pool = pool

    async def handle(self, msgs: Sequence[Msg]) -> None:
        events = []
        for msg in msgs:
            try:
                events.append(events_pb2.SearchPerformed.FromString(msg.data))
            except Exception:
                log.warning("dropping malformed search event", subject=msg.subject)
        await self.record(events)

    async def record(self, events: Sequence[events_pb2.SearchPerformed]) -> None:
        if not events:
            return
        async with self._pool.connection() as conn, conn.transaction():
            for event in events:
                await self._record_one(conn, event)

    async def _record_one(
        self, conn: psycopg.AsyncConnection[Row], event: events_pb2.SearchPerformed
    ) -> None:
        at = event.occurred_at.ToDatetime(tzinfo=UTC)
        served = list(dict.fromkeys(event.result_ids))
        results = list(event.result_ids[: event.result_count])
        if served and not event.compact:
            await conn.execute(
                _ACCESS_SQL, {"ids": served, "at": at, "query": f"hash:{event.query_hash}"}
            )
        if served:
            await conn.execute(_IMPRESSION_SQL, {"ids": served, "at": at})
        if event.result_count == 0:
            await conn.execute(
                "INSERT INTO search_misses (namespace, query, result_count, max_score, filters,"
                " created_at) VALUES (%s, %s, 0, %s, %s::jsonb, %s)",
                (
                    event.namespace,
                    event.miss_query,
                    event.max_score,
                    event.filters_json or "{}",
                    at,
                ),
            )
        elif len(results) >= 2:
            await conn.execute(
                "INSERT INTO co_retrievals (namespace, query_hash, memory_ids, result_count,"
                " created_at) VALUES (%s, %s, %s, %s, %s)",
                (
                    event.namespace,
                    event.query_hash,
                    results[:CO_RETRIEVAL_TOP],
                    event.result_count,
                    at,
                ),
            )


async def record_feedback(
    pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]], ids: Sequence[str]
) -> tuple[list[str], list[str]]:
    """Explicit usefulness: +1 for each existing id (once per call, even if repeated)."""
    unique = list(dict.fromkeys(ids))
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE memories SET useful_count = useful_count + 1 WHERE id = ANY(%s) RETURNING id",
            (unique,),
        )
        found = {r["id"] for r in await cur.fetchall()}
    return [i for i in unique if i in found], [i for i in unique if i not in found]
