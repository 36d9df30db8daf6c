"""The whole stack as a pytest fixture, started the way ``exo up`` starts it.

One stack per test session (starting the model takes seconds); tests isolate themselves with a
fresh ``namespace`` each instead of a fresh stack.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio
from psycopg.rows import dict_row

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.testing.settings import ApplySettings, apply_settings


def scheduled_maintenance() -> str:
    """Whether the session stack's maintenance runs its schedules and start-up pass: off
    unless the run's environment sets ``EXO_MAINTENANCE_SCHEDULER``. A run that crosses a job's
    hour (the nightly ones at 02:00-05:00 UTC) would otherwise consolidate, decay and archive
    the rows tests are asserting on; a test about schedules starts its own maintenance process
    with ``EXO_MAINTENANCE_SCHEDULER=true`` and the schedule it needs."""
    return os.environ.get("EXO_MAINTENANCE_SCHEDULER", "false")


@pytest.fixture(scope="session")
def exo_stack(
    postgres_server: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Every process running, on free ports, with its own database and NATS."""
    postgres_server.ensure_database("exo_stack")
    config = StackConfig.with_free_ports(
        tmp_path_factory.mktemp("stack"),
        database_url=postgres_server.dsn_for("exo_stack"),
        extra_env={
            "EXO_LOG_FORMAT": "json",
            "EXO_LOG_LEVEL": "info",
            "EXO_MAINTENANCE_SCHEDULER": scheduled_maintenance(),
        },
    )
    stack = Stack(config)
    stack.start(timeout=300)
    try:
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="session")
def gateway_url(request: pytest.FixtureRequest) -> str:
    """The gateway under test: ``EXO_TEST_GATEWAY_URL`` (e.g. the compose stack) when set,
    else the session's embedded stack."""
    external = os.environ.get("EXO_TEST_GATEWAY_URL")
    if external:
        return external.rstrip("/")
    stack: Stack = request.getfixturevalue("exo_stack")
    return stack.gateway_url


@pytest_asyncio.fixture
async def api(gateway_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client for the gateway under test."""
    headers = {}
    key = os.environ.get("EXO_TEST_API_KEY")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    async with httpx.AsyncClient(base_url=gateway_url, timeout=60.0, headers=headers) as client:
        yield client


@pytest_asyncio.fixture
async def stack_db(exo_stack: Stack) -> AsyncIterator[psycopg.AsyncConnection[dict[str, Any]]]:
    """A direct connection to the session stack's database, for asserting on stored rows."""
    conn = await psycopg.AsyncConnection.connect(
        exo_stack.database_url, autocommit=True, row_factory=dict_row
    )
    try:
        yield conn
    finally:
        await conn.close()


@pytest_asyncio.fixture
async def embedding_client(exo_stack: Stack) -> AsyncIterator[EmbeddingClient]:
    """A gRPC client of the session stack's embedding service (the real model)."""
    channel = open_channel(f"127.0.0.1:{exo_stack.config.grpc_ports['embedding']}")
    try:
        yield EmbeddingClient(channel, timeout=30.0)
    finally:
        await channel.close()


@pytest_asyncio.fixture
async def change_settings(api: httpx.AsyncClient, exo_stack: Stack) -> AsyncIterator[ApplySettings]:
    """Change the session stack's settings: each call returns once the change is in effect in
    every service; whatever the test changed is put back (and in effect) after it, pass or
    fail, so tests that read the defaults never see another test's values."""
    original: dict[str, str] = {}
    current = (await api.get("/api/settings")).json()

    async def change(values: dict[str, str]) -> None:
        for key in values:
            # A key not stored yet (a tag alias) is put back as empty, which removes it.
            original.setdefault(key, str(current.get(key, "")))
        await apply_settings(api, exo_stack.nats_url, values)

    try:
        yield change
    finally:
        if original:
            await apply_settings(api, exo_stack.nats_url, original)


@pytest.fixture
def namespace() -> str:
    """A namespace no other test uses, so tests on the shared stack cannot see each other."""
    return f"t-{uuid.uuid4().hex[:12]}"
