"""The NATS side of enrichment: memory events in (decoded by the shared loop in
``exocortex.core.bus.decode``, which parks a malformed one), the ``memory.enriched`` event out
(enqueued in the outbox with the result)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from google.protobuf.timestamp_pb2 import Timestamp
from nats.aio.msg import Msg

from exocortex.core.bus.decode import decoding
from exocortex.enrichment import metrics
from exocortex.enrichment.model import MemoryChange
from exocortex.proto.v1 import events_pb2


def handler(
    handle: Callable[[Sequence[MemoryChange]], Awaitable[None]],
) -> Callable[[Sequence[Msg]], Awaitable[None]]:
    """The consumer's batch handler: decoded changes to ``handle``; a failure is counted and
    raised (the consumer retries the batch event by event, then parks what still fails)."""

    async def on_events(events: list[events_pb2.MemoryChanged]) -> None:
        try:
            await handle([MemoryChange(e.memory_id, e.change) for e in events])
        except Exception:
            metrics.ENRICH_FAILURES.inc()
            raise

    return decoding(events_pb2.MemoryChanged, on_events)


def enriched(memory_id: str, version: int, namespace: str) -> bytes:
    """The ``memory.enriched`` event of the memory at its new version."""
    now = Timestamp()
    now.GetCurrentTime()
    return events_pb2.MemoryChanged(
        memory_id=memory_id,
        version=version,
        namespace=namespace,
        change="enriched",
        occurred_at=now,
    ).SerializeToString()
