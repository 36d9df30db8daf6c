"""The projector's side of NATS: memory events decoded into changes for the projector (a
malformed one is dead-lettered by the consumer), and the announcements of what became
searchable, exchanged with the other replicas.

With index servers several replicas share one projector durable, so the replica asked to await
a memory is often not the one that applied its event. The applier publishes one core-NATS
message per batch (``subjects.indexed_subject``: at most once, nothing stored), and every
replica marks what it hears in its ``IndexedVersions``, which releases its waiters. A lost
message only delays a waiter to its next look at the index (see ``waiters``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from exocortex.core.bus.decode import decode_all
from exocortex.core.logging import get_logger
from exocortex.proto.v1 import events_pb2
from exocortex.retrieval.projection.projector import MemoryChange, Projector
from exocortex.retrieval.projection.waiters import IndexedVersions

log = get_logger(__name__)


def to_change(event: events_pb2.MemoryChanged) -> MemoryChange:
    return MemoryChange(event.memory_id, event.version, tuple(event.chunk_ids), event.change)


class MemoryEvents:
    """The handler of the projector's durable consumer: one batch of messages at a time."""

    def __init__(self, projector: Projector) -> None:
        self._projector = projector

    async def handle(self, msgs: Sequence[Msg]) -> None:
        # A malformed message raises Malformed: the consumer parks it in the dead-letter stream
        # and projects the rest of the batch.
        events = decode_all(events_pb2.MemoryChanged, msgs)
        await self._projector.project([to_change(event) for event in events])


# Versions per message: a batch of 256 events with their chunks stays far below NATS's 1 MB
# payload limit at about 40 bytes an entry.
MAX_PER_MESSAGE = 10_000


def encode(origin: str, applied: Mapping[str, int]) -> bytes:
    return json.dumps({"origin": origin, "indexed": applied}, separators=(",", ":")).encode()


def sent_by(origin: str) -> bytes:
    """How every announcement ``encode`` makes for ``origin`` begins: a replica hears its own
    (one per projector batch) and skips them by this prefix without decoding them."""
    return encode(origin, {}).split(b',"indexed"', 1)[0]


def decode(data: bytes) -> tuple[str, dict[str, int]]:
    """(origin, versions by memory id); ValueError when the message is not an announcement."""
    body = json.loads(data)
    if not isinstance(body, dict) or not isinstance(body.get("indexed"), dict):
        raise ValueError("not an indexed-versions announcement")
    return str(body.get("origin", "")), {str(k): int(v) for k, v in body["indexed"].items()}


class IndexedAnnouncements:
    """One replica's side of the announcements: ``announce`` what its projector applied,
    ``listen`` to what the others applied (its own messages are skipped: already marked)."""

    def __init__(self, nc: NatsClient, subject: str, versions: IndexedVersions) -> None:
        self._nc = nc
        self._subject = subject
        self._versions = versions
        self._origin = uuid.uuid4().hex
        self._own = sent_by(self._origin)
        self._subscription: Subscription | None = None

    async def announce(self, applied: Mapping[str, int]) -> None:
        """Publish ``applied`` (memory id → version now searchable). Never raises: the batch is
        already applied, and a waiter elsewhere finds it in the index at its next look."""
        items = list(applied.items())
        for start in range(0, len(items), MAX_PER_MESSAGE):
            chunk = dict(items[start : start + MAX_PER_MESSAGE])
            try:
                await self._nc.publish(self._subject, encode(self._origin, chunk))
            except Exception as exc:
                log.warning("indexed announcement not sent", error=str(exc) or type(exc).__name__)
                return

    async def listen(self) -> None:
        """Subscribe (the client keeps the subscription across reconnects)."""
        self._subscription = await self._nc.subscribe(self._subject, cb=self._heard)

    async def close(self) -> None:
        if self._subscription is not None:
            await self._subscription.unsubscribe()
            self._subscription = None

    async def _heard(self, msg: Msg) -> None:
        if msg.data.startswith(self._own):
            return  # already marked when the batch was applied
        try:
            origin, applied = decode(msg.data)
        except (ValueError, TypeError) as exc:
            log.warning("malformed indexed announcement ignored", error=str(exc))
            return
        if origin == self._origin:
            return
        for memory_id, version in applied.items():
            self._versions.mark(memory_id, version)
