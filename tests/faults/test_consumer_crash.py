"""Events a consumer had taken when it crashed come back soon: JetStream redelivers them once
the ack wait passes, and that wait is short. A handler slower than the wait keeps its batch by
reporting progress, so a slow batch is not handled twice."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from nats.aio.msg import Msg
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

from exocortex.core.bus import client as bus
from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream
from exocortex.core.bus.dead_letter import deliveries
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.ports import free_port
from exocortex.testing.wait import until_async

DURABLE = "crash-test"


def _consumer(nc_js: object, handler: bus.Handler) -> DurableConsumer:
    return DurableConsumer(
        nc_js,  # type: ignore[arg-type]
        durable=DURABLE,
        filter_subject=subjects.SEARCH_PERFORMED,
        handler=handler,
        batch_size=16,
        fetch_timeout=0.2,
    )


async def test_events_taken_by_a_crashed_consumer_are_redelivered_within_the_ack_wait(
    tmp_path: Path,
) -> None:
    with EmbeddedNats(tmp_path / "nats", port=free_port()) as server:
        setup = await connect(server.url, name="setup")
        js = setup.jetstream()
        await ensure_stream(js)
        # A durable made with a minute's ack wait, as before: the consumer updates it.
        await js.add_consumer(
            subjects.STREAM,
            ConsumerConfig(
                durable_name=DURABLE,
                ack_policy=AckPolicy.EXPLICIT,
                deliver_policy=DeliverPolicy.ALL,
                ack_wait=60.0,
                max_ack_pending=10_000,
                filter_subject=subjects.SEARCH_PERFORMED,
            ),
        )

        taken = asyncio.Event()

        async def crash(_msgs: Sequence[Msg]) -> None:
            taken.set()
            await asyncio.Event().wait()  # never returns, never acks

        doomed = await connect(server.url, name="doomed")
        task = asyncio.create_task(_consumer(doomed.jetstream(), crash).run(asyncio.Event()))
        await js.publish(subjects.SEARCH_PERFORMED, b"event")
        await asyncio.wait_for(taken.wait(), 10)
        crashed = time.monotonic()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await doomed.close()

        redelivered = asyncio.Event()

        async def handle(msgs: Sequence[Msg]) -> None:
            if msgs:  # a fetch can come back empty
                redelivered.set()

        stop = asyncio.Event()
        successor = await connect(server.url, name="successor")
        task = asyncio.create_task(_consumer(successor.jetstream(), handle).run(stop))
        try:
            await asyncio.wait_for(redelivered.wait(), bus.ACK_WAIT_SECONDS + 5)
        finally:
            stop.set()
            await asyncio.wait_for(task, 5)
            await successor.close()
            await setup.close()
        waited = time.monotonic() - crashed
        print(f"\nevent taken by a crashed consumer redelivered after {waited:.1f}s")
        assert waited <= bus.ACK_WAIT_SECONDS + 2


async def test_a_batch_slower_than_the_ack_wait_is_handled_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bus, "ACK_WAIT_SECONDS", 1.0)
    monkeypatch.setattr(bus, "PROGRESS_SECONDS", 0.3)
    with EmbeddedNats(tmp_path / "nats", port=free_port()) as server:
        nc = await connect(server.url, name="slow")
        js = nc.jetstream()
        await ensure_stream(js)
        handled: list[tuple[bytes, int]] = []

        async def slow(msgs: Sequence[Msg]) -> None:
            handled.extend((m.data, deliveries(m)) for m in msgs)
            await asyncio.sleep(3.0)  # three ack waits

        stop = asyncio.Event()
        consumer = _consumer(js, slow)
        task = asyncio.create_task(consumer.run(stop))
        try:
            await js.publish(subjects.SEARCH_PERFORMED, b"slow event")

            async def acked() -> bool:
                return bool(handled) and await consumer.pending() == 0

            await until_async(acked, what="the slow batch was handled and acked", seconds=30)
            # Acked, so it is never delivered again; and the server delivered it only once
            # (a redelivery would have moved the consumer's sequence, or left it pending).
            info = await js.consumer_info(subjects.STREAM, DURABLE)
            assert info.delivered is not None
            assert info.delivered.consumer_seq == 1, info
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)
            await nc.close()
        assert handled == [(b"slow event", 1)]
