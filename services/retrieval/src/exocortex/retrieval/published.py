"""`search.performed` events: the side effects of a search, published after it has answered.

Publishing is best-effort and never awaited by the search itself: a slow or absent NATS costs a
lost access count at worst, never a failed or slower search.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp
from nats.js import JetStreamContext

from exocortex.core.bus import subjects
from exocortex.core.logging import get_logger
from exocortex.proto.v1 import events_pb2, retrieval_pb2
from exocortex.retrieval.search import SearchOutcome

log = get_logger(__name__)

PUBLISH_TIMEOUT_SECONDS = 2.0
MAX_IN_FLIGHT = 1_000


def query_hash(query: str) -> str:
    return hashlib.sha256(query.strip().encode()).hexdigest()[:16]


def to_event(
    req: retrieval_pb2.SearchRequest, outcome: SearchOutcome
) -> events_pb2.SearchPerformed:
    filters: dict[str, object] = {}
    if req.tags:
        filters["tags"] = list(req.tags)
    if req.HasField("content_type"):
        filters["content_type"] = req.content_type
    if req.HasField("source"):
        filters["source"] = req.source
    for name in ("after", "before"):
        if req.HasField(name):
            filters[name] = getattr(req, name).ToDatetime(tzinfo=UTC).isoformat()
    if req.purpose:
        filters["purpose"] = req.purpose
    stamp = Timestamp()
    stamp.FromDatetime(datetime.now(UTC))
    # Linked context was served too: it counts for access and implicit usefulness, after results.
    served = [r.row["id"] for r in outcome.results] + [x.row["id"] for x in outcome.linked]
    return events_pb2.SearchPerformed(
        query_hash=query_hash(req.query),
        namespace=req.namespace or "default",
        result_ids=served,
        compact=req.compact,
        result_count=len(outcome.results),
        max_score=max((r.score for r in outcome.results), default=0.0),
        occurred_at=stamp,
        miss_query=req.query.strip() if not outcome.results else "",
        filters_json=json.dumps(filters, separators=(",", ":")),
    )


class SearchPublisher:
    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, req: retrieval_pb2.SearchRequest, outcome: SearchOutcome) -> None:
        if len(self._tasks) >= MAX_IN_FLIGHT:
            log.warning("search events backing up; dropping one")
            return
        task = asyncio.get_running_loop().create_task(self._publish(to_event(req, outcome)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _publish(self, event: events_pb2.SearchPerformed) -> None:
        try:
            await self._js.publish(
                subjects.SEARCH_PERFORMED,
                event.SerializeToString(),
                timeout=PUBLISH_TIMEOUT_SECONDS,
            )
        except Exception as exc:
            log.warning("search.performed not published", error=str(exc) or type(exc).__name__)

    async def drain(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
