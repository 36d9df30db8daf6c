"""A process that starts while NATS is away is not held up by it: the client is returned at
once, connects when the server comes, and shuts down at once if it never does."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from nats.aio.client import Client as NatsClient

from exocortex.core.bus.client import connect
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.ports import free_port


async def _connected(client: NatsClient) -> None:
    # The client has no event for its first connection: look at it ten times a second.
    while True:
        if client.is_connected:
            return
        await asyncio.sleep(0.1)


async def test_connect_returns_before_nats_is_up_and_attaches_when_it_comes(
    tmp_path: Path,
) -> None:
    server = EmbeddedNats(tmp_path / "nats", port=free_port())
    # Started once to learn its URL (with whatever credentials it wants), then away.
    with server:
        url = server.url
    started = time.monotonic()
    client = await connect(url, name="test")
    try:
        assert time.monotonic() - started < 1.0
        assert not client.is_connected
        # Published while away: kept in the client's buffer and sent once connected.
        await client.publish("exo.test.early", b"early")
        await asyncio.sleep(1.5)
        assert not client.is_connected

        with server:
            await asyncio.wait_for(_connected(client), timeout=20)
            assert client.connected_url is not None
            assert client.connected_url.port == server.port
            sub = await client.subscribe("exo.test.echo")
            await client.publish("exo.test.echo", b"hello")
            msg = await sub.next_msg(timeout=5)
            assert msg.data == b"hello"
    finally:
        await client.close()


async def test_a_client_that_never_connected_stops_at_once() -> None:
    client = await connect(f"nats://127.0.0.1:{free_port()}", name="test")
    await asyncio.sleep(0.5)
    started = time.monotonic()
    await asyncio.wait_for(client.drain(), timeout=5)
    assert time.monotonic() - started < 1.0
    assert client.is_closed
