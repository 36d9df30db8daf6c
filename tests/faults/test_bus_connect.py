"""A process that starts while NATS is away is not held up by it: the client is returned at
once, connects when the server comes, and shuts down at once if it never does."""

from __future__ import annotations

import asyncio
from pathlib import Path

from nats.aio.client import Client as NatsClient

from exocortex.core.bus.client import connect
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.ports import free_port
from exocortex.testing.wait import until_async

# "At once" is checked as "does not hang": generous, yet under the client's 5 s drain timeout.
AT_ONCE_SECONDS = 4.0


async def _failed_attempts(client: NatsClient, count: int) -> None:
    """Wait until the client has tried and failed to reach a server ``count`` times."""

    async def failed() -> bool:
        return sum(server.reconnects for server in client.server_pool) >= count

    await until_async(failed, what=f"the client failed {count} connection attempts", seconds=30)


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
    # Were it to wait for NATS, it would never return: the server starts only further down.
    client = await asyncio.wait_for(connect(url, name="test"), timeout=AT_ONCE_SECONDS)
    try:
        assert not client.is_connected
        # Published while away: kept in the client's buffer and sent once connected.
        await client.publish("exo.test.early", b"early")
        # It keeps trying while NATS is away, and does not give up or pretend.
        await _failed_attempts(client, 2)
        assert not client.is_connected
        assert not client.is_closed

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
    await _failed_attempts(client, 1)
    # Without the connection there is nothing to drain: it closes without waiting out the
    # drain timeout.
    await asyncio.wait_for(client.drain(), timeout=AT_ONCE_SECONDS)
    assert client.is_closed
