"""For security tests: a gateway in front of the session stack with the three keys of the
threat model: ``ADMIN`` (read-write, every namespace), ``RO`` (read-only, namespace ``a``) and
``RW`` (read-write, namespace ``a``). Each test gets its own pair of namespaces, so ``a`` and ``b``
here are ``<namespace>`` and ``<namespace>-b``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest_asyncio

from exocortex.core.runtime.stack import Stack
from exocortex.testing.gateway import serve_gateway

ADMIN = "admin-key-0123456789abcdef"
RO = "ro-key-a-0123456789abcdef"
RW = "rw-key-a-0123456789abcdef"


@dataclass(frozen=True)
class Keyed:
    """A keyed gateway: its URL, the namespace the scoped keys may use (``a``) and one they
    may not (``b``), with a client per key (sending the key as a bearer token)."""

    url: str
    a: str
    b: str
    admin: httpx.AsyncClient
    ro: httpx.AsyncClient
    rw: httpx.AsyncClient
    anonymous: httpx.AsyncClient


def keys_for(a: str) -> str:
    return f"{ADMIN}:rw:*,{RO}:ro:{a},{RW}:rw:{a}"


@pytest_asyncio.fixture
async def keyed(exo_stack: Stack, namespace: str) -> AsyncIterator[Keyed]:
    a, b = namespace, f"{namespace}-b"
    async with serve_gateway(exo_stack, EXO_API_KEYS=keys_for(a)) as url:

        def client(key: str | None) -> httpx.AsyncClient:
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            return httpx.AsyncClient(base_url=url, headers=headers, timeout=60.0)

        async with (
            client(ADMIN) as admin,
            client(RO) as ro,
            client(RW) as rw,
            client(None) as anonymous,
        ):
            yield Keyed(url, a, b, admin, ro, rw, anonymous)
