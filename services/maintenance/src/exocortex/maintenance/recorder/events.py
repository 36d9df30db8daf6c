"""Records the side effects of searches, off the search's hot path.

Consumes `search.performed` (durable `maintenance-search-recorder`) and, per batch in one
transaction: access counts and the access log (not for compact searches, which only peek),
search impressions (for implicit usefulness; a fetch that came before its search was recorded is
counted here), zero-result queries and co-retrievals. A batch
is written with one statement per kind, not per search: these writes cost about as much CPU
as the search itself when done one search at a time, and they share the cores with searches.

Delivery is at-least-once: a batch redelivered after a crash counts its accesses again, which
only nudges a ranking signal; nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

from nats.aio.msg import Msg

from exocortex.core.bus.decode import decode_all
from exocortex.core.domain.text import strip_private
from exocortex.maintenance.recorder.repository import Pool, SearchBatch, write_batch
from exocortex.proto.v1 import events_pb2

CO_RETRIEVAL_TOP = 10


class SearchRecorder:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def handle(self, msgs: Sequence[Msg]) -> None:
        await self.record(decode_all(events_pb2.SearchPerformed, msgs))

    async def record(self, events: Sequence[events_pb2.SearchPerformed]) -> None:
        if not events:
            return
        batch = SearchBatch()
        for event in events:
            _add(batch, event)
        await write_batch(self._pool, batch)


def _add(batch: SearchBatch, event: events_pb2.SearchPerformed) -> None:
    """One search's side effects, added to the batch's statements."""
    at = event.occurred_at.ToDatetime(tzinfo=UTC)
    served = list(dict.fromkeys(event.result_ids))
    for memory_id in served:
        batch.impressions[memory_id] = max(at, batch.impressions.get(memory_id, at))
        batch.first_served[memory_id] = min(at, batch.first_served.get(memory_id, at))
        if not event.compact:  # compact searches only peek: no access is counted
            batch.access_counts[memory_id] += 1
            batch.last_access[memory_id] = max(at, batch.last_access.get(memory_id, at))
            batch.access_log.append((memory_id, f"hash:{event.query_hash}", at))
    results = list(event.result_ids[: event.result_count])
    if event.result_count == 0:
        # A search over every namespace is logged with no namespace (NULL).
        batch.misses.append(
            (
                event.namespace or None,
                # Retrieval already sends the query without private blocks; an event from
                # an older or other publisher must not put one in search_misses either.
                strip_private(event.miss_query),
                event.max_score,
                event.filters_json or "{}",
                at,
            )
        )
    elif len(results) >= 2:
        batch.co_retrievals.append(
            (
                event.namespace or None,
                event.query_hash,
                results[:CO_RETRIEVAL_TOP],
                event.result_count,
                at,
            )
        )
