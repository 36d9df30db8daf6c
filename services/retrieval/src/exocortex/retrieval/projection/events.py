"""The projector's side of NATS: memory events decoded into changes for the projector (a
malformed one is dead-lettered by the consumer)."""

from __future__ import annotations

from collections.abc import Sequence

from nats.aio.msg import Msg

from exocortex.core.bus.decode import decode_all
from exocortex.proto.v1 import events_pb2
from exocortex.retrieval.projection.projector import MemoryChange, Projector


def to_change(event: events_pb2.MemoryChanged) -> MemoryChange:
    return MemoryChange(event.memory_id, event.version, tuple(event.chunk_ids))


class MemoryEvents:
    """The handler of the projector's durable consumer: one batch of messages at a time."""

    def __init__(self, projector: Projector) -> None:
        self._projector = projector

    async def handle(self, msgs: Sequence[Msg]) -> None:
        # A malformed message raises Malformed: the consumer parks it in the dead-letter stream
        # and projects the rest of the batch.
        events = decode_all(events_pb2.MemoryChanged, msgs)
        await self._projector.project([to_change(event) for event in events])
