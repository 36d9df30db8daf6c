"""Changing the stack's settings from a test, and knowing when the change is in effect.

Ingest writes a change and announces it on ``settings.changed``; each service's settings cache
drops its values and answers on ``settings.applied`` with its name (core.bus.settings_changes).
``apply_settings`` returns once every named service answered, so the next store, search or job
reads the new values: a condition, not a wait for the caches' TTL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager

import httpx
import nats
from nats.aio.msg import Msg

from exocortex.core.bus import subjects

# The services that cache settings (embedding reads none).
CACHING_SERVICES = ("ingest", "retrieval", "enrichment", "maintenance")
APPLIED_TIMEOUT_SECONDS = 30.0

ApplySettings = Callable[[dict[str, str]], Awaitable[None]]


@asynccontextmanager
async def settings_applied(
    nats_url: str, services: Iterable[str] = CACHING_SERVICES
) -> AsyncIterator[None]:
    """Around something that changes settings (a PATCH, a job that writes them): on leaving,
    waits until each of ``services`` has dropped its cached settings."""
    waiting = set(services)
    all_applied = asyncio.Event()

    async def heard(msg: Msg) -> None:
        waiting.discard(msg.data.decode())
        if not waiting:
            all_applied.set()

    nc = await nats.connect(nats_url)
    try:
        await nc.subscribe(subjects.SETTINGS_APPLIED, cb=heard)
        await nc.flush()
        yield
        try:
            await asyncio.wait_for(all_applied.wait(), APPLIED_TIMEOUT_SECONDS)
        except TimeoutError:
            raise AssertionError(f"no settings.applied from {sorted(waiting)}") from None
    finally:
        await nc.close()


async def apply_settings(
    api: httpx.AsyncClient,
    nats_url: str,
    values: dict[str, str],
    services: Iterable[str] = CACHING_SERVICES,
) -> None:
    """PATCH ``values`` and return once each of ``services`` has dropped its cached settings."""
    async with settings_applied(nats_url, services):
        reply = await api.patch("/api/settings", json=values)
        assert reply.status_code == 200, reply.text


@asynccontextmanager
async def patched_settings(
    api: httpx.AsyncClient, nats_url: str, values: dict[str, str]
) -> AsyncIterator[None]:
    """``values`` in effect inside, the previous values in effect again after (a stack's
    settings are shared by its tests)."""
    current = (await api.get("/api/settings")).json()
    before = {key: str(current[key]) for key in values}
    await apply_settings(api, nats_url, values)
    try:
        yield
    finally:
        await apply_settings(api, nats_url, before)
