"""A lingering consumer takes a trickle of events in a few batches, and loses none."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from nats.aio.msg import Msg
from nats.js import JetStreamContext

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, Handler, connect, ensure_stream


def _consumer(
    js: JetStreamContext, durable: str, handler: Handler, **options: Any
) -> DurableConsumer:
    """A consumer of search events (a subject nothing else in these tests publishes to)."""
    return DurableConsumer(
        js,
        durable=durable,
        filter_subject=subjects.SEARCH_PERFORMED,
        handler=handler,
        fetch_timeout=0.2,
        **options,
    )


async def _batches(
    nats_url: str,
    linger: float,
    durable: str,
    *,
    max_linger: float = 0.0,
    events: int = 10,
    spacing: float = 0.03,
    batch_size: int = 64,
) -> list[list[bytes]]:
    nc = await connect(nats_url, name="linger-test")
    js = nc.jetstream()
    await ensure_stream(js)
    seen: list[list[bytes]] = []
    all_seen = asyncio.Event()

    async def handler(msgs: Sequence[Msg]) -> None:
        seen.append([m.data for m in msgs])
        if sum(map(len, seen)) >= events:
            all_seen.set()

    stop = asyncio.Event()
    consumer = _consumer(
        js, durable, handler, batch_size=batch_size, linger=linger, max_linger=max_linger
    )
    task = asyncio.create_task(consumer.run(stop))
    try:
        for i in range(events):
            await js.publish(subjects.SEARCH_PERFORMED, str(i).encode())
            await asyncio.sleep(spacing)
        await asyncio.wait_for(all_seen.wait(), 30)
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


async def test_a_steady_stream_is_taken_in_few_batches_while_it_keeps_flowing(
    nats_url: str,
) -> None:
    """With ``max_linger``, each linger that brings events is followed by another: a stream of
    80 events over about 1.6 s, each linger 0.5 s, is handled in a few batches, not one per
    linger, and every event exactly once. (An event arrives every 0.02 s: only a stall of
    nearly a whole linger in the stream could end a batch early.)"""
    seen = await _batches(
        nats_url,
        0.5,
        "linger-stream",
        max_linger=60.0,
        events=80,
        spacing=0.02,
        batch_size=128,
    )
    assert sorted(int(d) for batch in seen for d in batch) == list(range(80))
    # One linger alone would cut the stream into three or four batches (1.6 s / 0.5 s); the
    # first fetch may take the first event on its own.
    assert len(seen) <= 2, [len(b) for b in seen]


async def test_a_lone_event_waits_one_linger_not_the_longest(nats_url: str) -> None:
    """Nothing follows it: the linger that brings nothing ends the batch at once."""
    nc = await connect(nats_url, name="linger-lone-test")
    js = nc.jetstream()
    await ensure_stream(js)
    handled = asyncio.Event()

    async def handler(msgs: Sequence[Msg]) -> None:
        handled.set()

    stop = asyncio.Event()
    # A stream could linger an hour: a lone event handled at all (within the wait below) was
    # handled after the one linger that brought nothing more.
    consumer = _consumer(js, "linger-lone", handler, batch_size=64, linger=0.1, max_linger=3600.0)
    task = asyncio.create_task(consumer.run(stop))
    try:
        await js.publish(subjects.SEARCH_PERFORMED, b"lone")
        await asyncio.wait_for(handled.wait(), 30)
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()


async def test_batches_in_flight_overlap_and_each_is_acked_when_its_handler_returns(
    nats_url: str,
) -> None:
    """With ``max_in_flight`` above 1 the next batch is handled while an earlier one still
    waits; nothing is acked before its own handler returned, and everything is in the end."""
    nc = await connect(nats_url, name="in-flight-test")
    js = nc.jetstream()
    await ensure_stream(js)
    release_first = asyncio.Event()
    second_seen = asyncio.Event()
    seen: list[bytes] = []

    async def handler(msgs: Sequence[Msg]) -> None:
        data = [m.data for m in msgs]
        seen.extend(data)
        if b"first" in data:
            await release_first.wait()
        else:
            second_seen.set()

    stop = asyncio.Event()
    consumer = _consumer(js, "in-flight", handler, batch_size=1, max_in_flight=4)
    task = asyncio.create_task(consumer.run(stop))
    try:
        await js.publish(subjects.SEARCH_PERFORMED, b"first")
        await js.publish(subjects.SEARCH_PERFORMED, b"second")
        # The second batch is handled while the first one's handler is still waiting.
        await asyncio.wait_for(second_seen.wait(), 10)
        assert await consumer.pending() >= 1  # the first is not acked yet
        release_first.set()
        for _ in range(100):
            if await consumer.pending() == 0:
                break
            await asyncio.sleep(0.1)
        assert await consumer.pending() == 0
        assert sorted(seen) == [b"first", b"second"]
    finally:
        release_first.set()
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()
