"""The projector's side of NATS: memory events decoded into changes for the projector."""

from __future__ import annotations

from collections.abc import Sequence

from nats.aio.msg import Msg

from exocortex.core.logging import get_logger
from exocortex.proto.v1 import events_pb2
from exocortex.retrieval.projection.projector import MemoryChange, Projector

log = get_logger(__name__)


def to_change(event: events_pb2.MemoryChanged) -> MemoryChange:
    return MemoryChange(event.memory_id, event.version, tuple(event.chunk_ids))


class MemoryEvents:
    """The handler of the projector's durable consumer: one batch of messages at a time."""

    def __init__(self, projector: Projector) -> None:
        self._projector = projector

    async def handle(self, msgs: Sequence[Msg]) -> None:
        changes = []
        for msg in msgs:
            try:
                changes.append(to_change(events_pb2.MemoryChanged.FromString(msg.data)))
            except Exception:
                log.warning("dropping malformed memory event", subject=msg.subject)
        await self._projector.project(changes)
