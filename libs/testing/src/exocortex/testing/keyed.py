"""For security tests: a gateway in front of the session stack with the three keys of the
threat model: ``ADMIN`` (read-write, every namespace), a read-only key and a read-write key
scoped to namespace ``a``. Each test gets its own pair of namespaces, so ``a`` and ``b`` are
names no other test uses, and scoped keys of its own (``ro_key``, ``rw_key``) that see ``a``
only.

Starting a gateway takes a second or two, so one gateway serves many tests: it is started with
the keys of ``PAIRS_PER_GATEWAY`` such pairs at once, and each test takes the next unused pair
(another gateway is started when they run out). A test's scoped keys are scoped to its own
``a`` alone, exactly as with a gateway of its own; only the all-namespaces key is shared.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass

import httpx
import pytest_asyncio

from exocortex.core.runtime.stack import Stack
from exocortex.testing.gateway import serve_gateway

ADMIN = "admin-key-0123456789abcdef"
RO = "ro-key-a-0123456789abcdef"
RW = "rw-key-a-0123456789abcdef"
PAIRS_PER_GATEWAY = 24


@dataclass(frozen=True)
class Keyed:
    """A keyed gateway: its URL, the namespace the scoped keys may use (``a``) and one they
    may not (``b``), the scoped keys, and a client per key (sending it as a bearer token)."""

    url: str
    a: str
    b: str
    admin: httpx.AsyncClient
    ro: httpx.AsyncClient
    rw: httpx.AsyncClient
    anonymous: httpx.AsyncClient
    ro_key: str
    rw_key: str


def keys_for(a: str, ro: str = RO, rw: str = RW) -> str:
    """``EXO_API_KEYS`` of a gateway with the threat model's keys for namespace ``a``."""
    return f"{ADMIN}:rw:*,{ro}:ro:{a},{rw}:rw:{a}"


@dataclass(frozen=True)
class _Pair:
    url: str
    a: str
    ro_key: str
    rw_key: str


class KeyedGateways:
    """Keyed gateways shared by the session's tests, each with the keys of many pairs."""

    def __init__(self, stack: Stack, running: AsyncExitStack) -> None:
        self._stack = stack
        self._running = running
        self._free: list[_Pair] = []

    async def pair(self) -> _Pair:
        if not self._free:
            pairs = []
            for _ in range(PAIRS_PER_GATEWAY):
                token = uuid.uuid4().hex[:16]
                pairs.append((f"t-{uuid.uuid4().hex[:12]}", f"ro-{token}", f"rw-{token}"))
            keys = ",".join([f"{ADMIN}:rw:*"] + [f"{ro}:ro:{a},{rw}:rw:{a}" for a, ro, rw in pairs])
            url = await self._running.enter_async_context(
                serve_gateway(self._stack, EXO_API_KEYS=keys)
            )
            self._free = [_Pair(url, a, ro, rw) for a, ro, rw in reversed(pairs)]
        return self._free.pop()


@pytest_asyncio.fixture(scope="session")
async def keyed_gateways(exo_stack: Stack) -> AsyncIterator[KeyedGateways]:
    async with AsyncExitStack() as running:
        yield KeyedGateways(exo_stack, running)


@pytest_asyncio.fixture
async def keyed(keyed_gateways: KeyedGateways) -> AsyncIterator[Keyed]:
    pair = await keyed_gateways.pair()
    a, b = pair.a, f"{pair.a}-b"

    def client(key: str | None) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.AsyncClient(base_url=pair.url, headers=headers, timeout=60.0)

    async with (
        client(ADMIN) as admin,
        client(pair.ro_key) as ro,
        client(pair.rw_key) as rw,
        client(None) as anonymous,
    ):
        yield Keyed(pair.url, a, b, admin, ro, rw, anonymous, pair.ro_key, pair.rw_key)
