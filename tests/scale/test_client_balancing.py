"""gRPC clients spread calls over every replica a target names and take a call that meets
UNAVAILABLE to another replica (core/rpc/client.py), as they do over a headless Service on a
cluster (dns:///name:port); here two real gRPC servers on loopback stand in for two replicas."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import grpc
import pytest

from exocortex.core.rpc.client import open_channel

METHOD = "/exocortex.test.Replica/Call"


@asynccontextmanager
async def replica(
    name: str, calls: Counter[str], stopping: set[str] | None = None
) -> AsyncIterator[int]:
    """A server answering METHOD with its name, or UNAVAILABLE while its name is in
    ``stopping``; yields its port."""

    async def call(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        calls[name] += 1
        if stopping is not None and name in stopping:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"{name} is stopping")
        return name.encode()

    identity: Callable[[bytes], bytes] = lambda raw: raw  # noqa: E731
    handler = grpc.method_handlers_generic_handler(
        "exocortex.test.Replica",
        {"Call": grpc.unary_unary_rpc_method_handler(call, identity, identity)},
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(0)


async def _call(channel: grpc.aio.Channel) -> str:
    reply: bytes = await channel.unary_unary(METHOD)(b"", timeout=5)
    return reply.decode()


async def test_calls_go_round_robin_over_every_replica() -> None:
    calls: Counter[str] = Counter()
    async with replica("a", calls) as a, replica("b", calls) as b:
        channel = open_channel(f"ipv4:127.0.0.1:{a},127.0.0.1:{b}")
        try:
            answers = Counter([await _call(channel) for _ in range(20)])
        finally:
            await channel.close()
    # Pick-first would send all 20 to one replica.
    assert answers["a"] >= 5
    assert answers["b"] >= 5


async def test_a_call_meeting_unavailable_is_retried_on_another_replica() -> None:
    calls: Counter[str] = Counter()
    stopping: set[str] = set()
    async with replica("a", calls, stopping) as a, replica("b", calls, stopping) as b:
        channel = open_channel(f"ipv4:127.0.0.1:{a},127.0.0.1:{b}")
        try:
            # Both replicas connected and serving, as in steady state; then one starts to stop.
            assert {await _call(channel) for _ in range(6)} == {"a", "b"}
            stopping.add("a")
            calls.clear()
            answers = [await _call(channel) for _ in range(20)]
        finally:
            await channel.close()
    assert answers == ["b"] * 20
    # The stopping replica was still asked (so the retries were needed).
    assert calls["a"] > 0


async def test_a_lone_replica_answering_unavailable_still_fails_fast() -> None:
    calls: Counter[str] = Counter()
    async with replica("stopping", calls, {"stopping"}) as a:
        channel = open_channel(f"127.0.0.1:{a}")
        try:
            with pytest.raises(grpc.aio.AioRpcError) as failure:
                await _call(channel)
        finally:
            await channel.close()
    assert failure.value.code() == grpc.StatusCode.UNAVAILABLE
    # One retry, no more: a store against a down service still answers 503 promptly.
    assert calls["stopping"] == 2
