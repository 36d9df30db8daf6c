"""One decode loop for every consumer: events come back in order, and a malformed message is
parked in the dead-letter stream at its first delivery while the rest of its batch goes through
(real NATS from the test harness)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from nats.aio.msg import Msg
from nats.js.errors import NotFoundError

from exocortex.core.bus import dead_letter, subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream
from exocortex.core.bus.decode import Malformed, decode_all, decoding
from exocortex.proto.v1 import events_pb2
from exocortex.testing.wait import until_async

GARBAGE = b"\x0a\xff\xff\xff\xff\xff"


def _msg(data: bytes, subject: str = "exo.memory.updated") -> Msg:
    return Msg(_client=None, subject=subject, data=data)  # type: ignore[arg-type]


def _event(memory_id: str) -> bytes:
    return events_pb2.MemoryChanged(memory_id=memory_id, version=1).SerializeToString()


def test_a_batch_decodes_in_order() -> None:
    events = decode_all(events_pb2.MemoryChanged, [_msg(_event("a")), _msg(_event("b"))])
    assert [e.memory_id for e in events] == ["a", "b"]


def test_a_malformed_message_is_named() -> None:
    with pytest.raises(Malformed, match=r"exo\.memory\.updated: not a exocortex\.v1\.Memory"):
        decode_all(events_pb2.MemoryChanged, [_msg(_event("a")), _msg(GARBAGE)])


async def test_a_malformed_event_is_parked_at_once_and_the_batch_goes_on(nats_url: str) -> None:
    durable = f"decode-{uuid.uuid4().hex[:8]}"
    subject = f"exo.test.{durable}"
    nc = await connect(nats_url, name="decode-test")
    js = nc.jetstream()
    await ensure_stream(js)
    seen: list[str] = []
    both = asyncio.Event()

    async def project(events: list[events_pb2.MemoryChanged]) -> None:
        seen.extend(e.memory_id for e in events)
        if {"before", "after"} <= set(seen):
            both.set()

    stop = asyncio.Event()
    consumer = DurableConsumer(
        js,
        durable=durable,
        filter_subject=subject,
        handler=decoding(events_pb2.MemoryChanged, project),
        fetch_timeout=0.2,
        linger=0.3,  # the three arrive in one batch
        max_deliveries=5,
        retry_delay=5.0,  # a retry would show as a parked event arriving late
    )
    task = asyncio.create_task(consumer.run(stop))
    try:
        await js.publish(subject, _event("before"))
        await js.publish(subject, GARBAGE)
        await js.publish(subject, _event("after"))
        await asyncio.wait_for(both.wait(), 10)
        # Until the first parked event the DLQ stream (or its subject) is not found.
        parked = await until_async(
            lambda: js.get_last_msg(subjects.DLQ_STREAM, f"dlq.{durable}"),
            what="the malformed event reached the dead-letter stream",
            seconds=30,
            retry_on=(NotFoundError,),
        )
        assert parked.data == GARBAGE
        headers = parked.headers or {}
        assert headers[dead_letter.DELIVERIES_HEADER] == "1"
        assert "Malformed" in headers[dead_letter.ERROR_HEADER]
        assert sorted(seen) == ["after", "before"]
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()
