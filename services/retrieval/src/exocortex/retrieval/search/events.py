"""`search.performed` events: the side effects of a search, published after it has answered.

Publishing is best-effort and never awaited by the search itself: a slow or absent NATS costs a
lost access count at worst, never a failed or slower search. The event is a plain NATS publish on
a stream subject, so JetStream stores it as it would a JetStream publish; not waiting for the
stream's acknowledgement saves the reply's round trip (a timer, a future and a JSON reply to
parse: about a tenth of retrieval's event-loop time a search). While NATS is away the client
buffers events and sends them on reconnect; one that cannot be buffered is logged and dropped.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp
from nats.aio.client import Client as NatsClient

from exocortex.core.bus import subjects
from exocortex.core.domain.text import strip_private
from exocortex.core.logging import get_logger
from exocortex.proto.v1 import events_pb2
from exocortex.retrieval.search.query import SearchQuery
from exocortex.retrieval.search.results import SearchOutcome

log = get_logger(__name__)

MAX_IN_FLIGHT = 1_000


def query_hash(query: str) -> str:
    return hashlib.sha256(query.strip().encode()).hexdigest()[:16]


def to_event(req: SearchQuery, outcome: SearchOutcome) -> events_pb2.SearchPerformed:
    filters: dict[str, object] = {}
    if req.tags:
        filters["tags"] = list(req.tags)
    if req.content_type is not None:
        filters["content_type"] = req.content_type
    if req.source is not None:
        filters["source"] = req.source
    if req.after is not None:
        filters["after"] = req.after.isoformat()
    if req.before is not None:
        filters["before"] = req.before.isoformat()
    if req.purpose:
        filters["purpose"] = req.purpose
    stamp = Timestamp()
    stamp.FromDatetime(datetime.now(UTC))
    # The query as searched: without its private blocks (validation refused a query that
    # had nothing else), so a miss never records one.
    query = strip_private(req.query)
    # Linked context was served too: it counts for access and implicit usefulness, after results.
    served = [r.memory.id for r in outcome.results] + [x.memory.id for x in outcome.linked]
    return events_pb2.SearchPerformed(
        query_hash=query_hash(query),
        # Empty for a search over every namespace.
        namespace=req.namespace,
        result_ids=served,
        compact=req.compact,
        result_count=len(outcome.results),
        max_score=max((r.score for r in outcome.results), default=0.0),
        occurred_at=stamp,
        miss_query=query if not outcome.results else "",
        filters_json=json.dumps(filters, separators=(",", ":")),
    )


class SearchPublisher:
    def __init__(self, nc: NatsClient) -> None:
        self._nc = nc
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, req: SearchQuery, outcome: SearchOutcome) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT:
            log.warning("search events backing up; dropping one")
            return
        # The event is built in the task too, once the search has returned its outcome.
        task = asyncio.get_running_loop().create_task(self._publish(req, outcome))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, req: SearchQuery, outcome: SearchOutcome) -> None:
        try:
            event = to_event(req, outcome)
            await self._nc.publish(subjects.SEARCH_PERFORMED, event.SerializeToString())
        except Exception as exc:
            log.warning("search.performed not published", error=str(exc) or type(exc).__name__)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
