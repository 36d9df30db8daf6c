"""Enrichment's batch handler hands the service domain changes, in order, and counts a failed
batch before raising it (so the consumer retries it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pytest
from nats.aio.msg import Msg

from exocortex.core.bus.decode import Malformed
from exocortex.enrichment import events, metrics
from exocortex.enrichment.model import MemoryChange
from exocortex.proto.v1 import events_pb2


@dataclass
class _Message:
    """What the handler reads of a NATS message."""

    data: bytes
    subject: str = "exo.memory.stored"


def _batch(*items: tuple[str, str]) -> list[Msg]:
    return [
        cast(Msg, _Message(events_pb2.MemoryChanged(memory_id=m, change=c).SerializeToString()))
        for m, c in items
    ]


async def test_changes_arrive_in_order() -> None:
    seen: list[MemoryChange] = []

    async def handle(changes: Sequence[MemoryChange]) -> None:
        seen.extend(changes)

    await events.handler(handle)(_batch(("m1", "stored"), ("m2", "updated")))
    assert seen == [MemoryChange("m1", "stored"), MemoryChange("m2", "updated")]


async def test_a_failed_batch_is_counted_and_raised() -> None:
    async def handle(changes: Sequence[MemoryChange]) -> None:
        raise RuntimeError("retrieval away")

    before = metrics.ENRICH_FAILURES._value.get()
    with pytest.raises(RuntimeError):
        await events.handler(handle)(_batch(("m1", "stored")))
    assert metrics.ENRICH_FAILURES._value.get() == before + 1


async def test_a_malformed_event_is_named_for_the_consumer_to_park() -> None:
    async def handle(changes: Sequence[MemoryChange]) -> Any:
        raise AssertionError("not reached")

    with pytest.raises(Malformed):
        await events.handler(handle)([cast(Msg, _Message(b"\xff\xff not protobuf"))])
