"""An event that fails on its own is parked after a few deliveries; one that fails because a
dependency is away is retried, with a growing delay, for much longer."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import psycopg
import pytest
from nats.js.errors import NotFoundError

from exocortex.core.bus import subjects
from exocortex.core.bus.client import DurableConsumer, connect, ensure_stream
from exocortex.core.bus.decode import decoding
from exocortex.core.bus.redelivery import RedeliveryPolicy, is_transient
from exocortex.core.errors import InvalidArgument, Unavailable
from exocortex.proto.v1 import events_pb2
from exocortex.testing.wait import until_async


class _RpcError(grpc.aio.AioRpcError):
    def __init__(self, code: grpc.StatusCode) -> None:
        super().__init__(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="test")


@pytest.mark.parametrize(
    "exc",
    [
        Unavailable("the retrieval service is not reachable; try again shortly"),
        psycopg.OperationalError("connection refused"),
        ConnectionResetError(),
        TimeoutError(),
        _RpcError(grpc.StatusCode.UNAVAILABLE),
        _RpcError(grpc.StatusCode.DEADLINE_EXCEEDED),
    ],
)
def test_an_outage_is_transient(exc: BaseException) -> None:
    assert is_transient(exc)


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("bad field"),
        KeyError("memory_id"),
        InvalidArgument("content is empty"),
        psycopg.errors.UniqueViolation("duplicate key"),
        _RpcError(grpc.StatusCode.INVALID_ARGUMENT),
        _RpcError(grpc.StatusCode.INTERNAL),
    ],
)
def test_a_bad_event_is_not_transient(exc: BaseException) -> None:
    assert not is_transient(exc)


def test_a_bad_event_is_parked_after_its_deliveries() -> None:
    policy = RedeliveryPolicy(max_deliveries=5, retry_delay=2.0)
    bad = ValueError("bad field")
    assert [policy.delay(n, bad) for n in range(1, 6)] == [2.0, 2.0, 2.0, 2.0, None]


def test_an_outage_is_retried_with_doubling_delays_then_parked_much_later() -> None:
    policy = RedeliveryPolicy(max_deliveries=5, retry_delay=2.0)
    away = Unavailable("away")
    delays = [policy.delay(n, away) for n in range(1, policy.max_outage_deliveries + 1)]
    assert delays[:6] == [2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert delays[-1] is None
    assert None not in delays[:-1]
    # Far longer than the five deliveries of a bad event: over an hour of retries.
    assert sum(d for d in delays if d is not None) > 3600


async def test_an_event_outlives_an_outage_longer_than_its_deliveries(nats_url: str) -> None:
    """On real JetStream: the handler's dependency is away for more deliveries than a bad event
    gets (3 here); the event is handled once it is back, not parked."""
    durable = f"outage-{uuid.uuid4().hex[:8]}"
    subject = f"exo.test.{durable}"
    nc = await connect(nats_url, name="redelivery-test")
    js = nc.jetstream()
    await ensure_stream(js)
    attempts = 0
    handled = asyncio.Event()

    async def handle(events: list[events_pb2.MemoryChanged]) -> None:
        nonlocal attempts
        attempts += 1
        if attempts <= 6:
            raise Unavailable("the retrieval service is not reachable; try again shortly")
        handled.set()

    stop = asyncio.Event()
    consumer = DurableConsumer(
        js,
        durable=durable,
        filter_subject=subject,
        handler=decoding(events_pb2.MemoryChanged, handle),
        fetch_timeout=0.2,
        max_deliveries=3,
        retry_delay=0.05,
        max_retry_delay=0.2,
    )
    task = asyncio.create_task(consumer.run(stop))
    try:
        await js.publish(
            subject, events_pb2.MemoryChanged(memory_id="m", version=1).SerializeToString()
        )
        await until_async(
            lambda: _is_set(handled), what="the event handled after the outage", seconds=60
        )
        # Six refusals, then handled: never parked after its 3 deliveries. Delivery is at least
        # once, so a redelivery racing the ack on a loaded machine may hand it over once more.
        assert attempts >= 7
        with pytest.raises(NotFoundError):
            await js.get_last_msg(subjects.DLQ_STREAM, f"dlq.{durable}")
    finally:
        stop.set()
        await asyncio.wait_for(task, 5)
        await nc.close()


async def _is_set(event: asyncio.Event) -> bool:
    return event.is_set()
