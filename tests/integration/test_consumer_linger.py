"""A lingering consumer takes a trickle of events in a few batches, and loses none."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from nats.aio.msg import Msg

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream


async def _batches(nats_url: str, linger: float, durable: str) -> list[list[bytes]]:
    nc = await connect(nats_url, name="linger-test")
    js = nc.jetstream()
    await ensure_stream(js)
    seen: list[list[bytes]] = []
    all_seen = asyncio.Event()

    async def handler(msgs: Sequence[Msg]) -> None:
        seen.append([m.data for m in msgs])
        if sum(map(len, seen)) >= 10:
            all_seen.set()

    stop = asyncio.Event()
    consumer = DurableConsumer(
        js,
        durable=durable,
        filter_subject=subjects.SEARCH_PERFORMED,
        handler=handler,
        batch_size=64,
        fetch_timeout=0.2,
        linger=linger,
    )
    task = asyncio.create_task(consumer.run(stop))
    try:
        for i in range(10):
            await js.publish(subjects.SEARCH_PERFORMED, str(i).encode())
            await asyncio.sleep(0.03)
        await asyncio.wait_for(all_seen.wait(), 10)
        for _ in range(100):  # the last batch's acks follow its handler
            if await consumer.pending() == 0:
                break
            await asyncio.sleep(0.1)
        assert await consumer.pending() == 0  # every batch was acked
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()
    return seen


@pytest.mark.parametrize("linger", [0.0, 2.0])
async def test_every_event_is_handled_once(nats_url: str, linger: float) -> None:
    seen = await _batches(nats_url, linger, f"linger-{int(linger * 10)}")
    assert sorted(int(d) for batch in seen for d in batch) == list(range(10))
    if linger:
        # Ten events published within about 0.3 s: the first batch lingers 2 s and takes the
        # rest (two batches at most, should the first fetch already hold a few).
        assert len(seen) <= 2, seen
