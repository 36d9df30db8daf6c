"""The NATS side of enrichment: memory events in (decoded, a malformed one dead-lettered), the
``memory.enriched`` event out (enqueued in the outbox with the result)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

from google.protobuf.timestamp_pb2 import Timestamp
from nats.aio.msg import Msg

from exocortex.core.bus.decode import decode_all
from exocortex.enrichment import metrics
from exocortex.enrichment.model import MemoryChange
from exocortex.proto.v1 import events_pb2


def decode(msgs: Sequence[Msg]) -> list[MemoryChange]:
    """The changes a batch of messages carries. A message that does not decode raises
    ``Malformed``: the consumer parks it in the dead-letter stream and handles the rest."""
    events = decode_all(events_pb2.MemoryChanged, msgs)
    return [MemoryChange(event.memory_id, event.change) for event in events]


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


def handler(
    handle: Callable[[Sequence[MemoryChange]], Awaitable[None]],
) -> Callable[[Sequence[Msg]], Awaitable[None]]:
    """The consumer's batch handler: decode, then ``handle``; a failure is counted and raised
    (the batch is retried event by event, then parked, by the consumer)."""

    async def on_batch(msgs: Sequence[Msg]) -> None:
        changes = decode(msgs)
        try:
            await handle(changes)
        except Exception:
            metrics.ENRICH_FAILURES.inc()
            raise

    return on_batch
