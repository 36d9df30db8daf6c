"""A poison event (one a consumer cannot process) is retried a bounded number of times, then
parked in the dead-letter stream with headers saying why; the consumer keeps going."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

import httpx
from nats.aio.msg import Msg
from nats.js.errors import NotFoundError
from prometheus_client import REGISTRY

from exocortex.core.bus import dead_letter, subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream
from exocortex.core.runtime.stack import Stack
from exocortex.testing.wait import until_async

POISON = b"poison"


async def _eventually(check: asyncio.Event, seconds: float) -> None:
    await asyncio.wait_for(check.wait(), seconds)


async def test_poison_event_is_dead_lettered_after_bounded_retries(nats_url: str) -> None:
    durable = f"poison-{uuid.uuid4().hex[:8]}"
    subject = f"exo.test.{durable}"
    nc = await connect(nats_url, name="poison-test")
    js = nc.jetstream()
    await ensure_stream(js)
    handled: list[bytes] = []
    attempts: list[int] = []
    after_parked = asyncio.Event()

    async def handler(msgs: Sequence[Msg]) -> None:
        if any(m.data == POISON for m in msgs):
            attempts.append(len(msgs))
            raise ValueError("cannot project this event")
        handled.extend(m.data for m in msgs)
        if b"after" in handled:
            after_parked.set()

    stop = asyncio.Event()
    consumer = DurableConsumer(
        js,
        durable=durable,
        filter_subject=subject,
        handler=handler,
        fetch_timeout=0.2,
        linger=0.3,  # the poison and the good event arrive in one batch
        max_deliveries=3,
        retry_delay=0.2,
    )
    task = asyncio.create_task(consumer.run(stop))
    try:
        await js.publish(subject, POISON, headers={subjects.CORRELATION_HEADER: "corr-1"})
        await js.publish(subject, b"good")
        # The DLQ stream appears with the first parked event; wait for that.
        parked = await until_async(
            lambda: js.get_last_msg(subjects.DLQ_STREAM, f"dlq.{durable}"),
            what="the poison event reached the dead-letter stream",
            seconds=30,
            retry_on=(NotFoundError,),
        )
        await js.publish(subject, b"after")
        await _eventually(after_parked, 10)

        # The good event in the failed batch went through on its own, once; the one after the
        # poison was not held up.
        assert handled.count(b"good") == 1
        assert handled[-1] == b"after"
        # Bounded: the first delivery (in the batch, then alone) and two redeliveries.
        assert attempts == [2, 1, 1, 1]

        assert parked.data == POISON
        headers = parked.headers or {}
        assert headers[dead_letter.CONSUMER_HEADER] == durable
        assert headers[dead_letter.SUBJECT_HEADER] == subject
        assert headers[dead_letter.DELIVERIES_HEADER] == "3"
        assert "cannot project this event" in headers[dead_letter.ERROR_HEADER]
        assert headers[subjects.CORRELATION_HEADER] == "corr-1"
        assert int(headers[dead_letter.SEQUENCE_HEADER]) >= 1
        sample = REGISTRY.get_sample_value("exo_events_dead_lettered_total", {"consumer": durable})
        assert sample == 1.0

        # The last ack follows its handler. Once the server counts nothing pending or awaiting
        # an ack, the poison was acked on EXO and JetStream will not deliver it again.
        async def settled() -> bool:
            return await consumer.pending() == 0

        await until_async(settled, what="the consumer has nothing pending", seconds=30)
        assert len(attempts) == 4
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()


async def test_garbage_memory_event_does_not_jam_the_projector(
    exo_stack: Stack, api: httpx.AsyncClient, namespace: str
) -> None:
    nc = await connect(exo_stack.nats_url, name="garbage-test")
    try:
        js = nc.jetstream()
        for garbage in (b"\xff\x00\xfe garbage", b"\x0a\xff\xff\xff\xff\xff", b""):
            await js.publish(subjects.MEMORY_UPDATED, garbage)
    finally:
        await nc.close()
    stored = await api.post(
        "/api/memories",
        json={"content": "The projector keeps going after garbage events.", "namespace": namespace},
    )
    assert stored.status_code == 201, stored.text
    assert stored.json()["indexed"] is True
