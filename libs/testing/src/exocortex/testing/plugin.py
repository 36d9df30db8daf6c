"""pytest fixtures backed by real servers: embedded PostgreSQL and NATS with JetStream.

Servers start once per test session (lazily, only when a test asks for them). Each test that
asks for `database_url` gets a fresh, fully migrated database cloned from a template that is
migrated once per session, which costs tens of milliseconds instead of a full migration.
Tests that use any of these fixtures are marked `integration` automatically.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator

import nats
import psycopg
import pytest
import pytest_asyncio
from nats.js.errors import NotFoundError
from psycopg import sql

from exocortex.core.db import migrate
from exocortex.core.db.pool import Pool, open_pool
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.postgres import EmbeddedPostgres

TEMPLATE_DATABASE = "exo_template"

_INTEGRATION_FIXTURES = frozenset(
    {
        "postgres_server",
        "migrated_template",
        "database_url",
        "db_pool",
        "nats_server",
        "nats_url",
        "exo_stack",
        "api",
        "change_settings",
        "keyed",
        "keyed_gateways",
        "stack_db",
        "embedding_client",
    }
)
_db_counter = itertools.count(1)
_OWN_BASETEMP = pytest.StashKey[str]()


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Give each test session a temporary folder of its own, outside the per-user folder pytest
    shares between sessions (unless --basetemp names one).

    Every new session resets that shared folder to mode 0700 and prunes all but its three newest
    runs. The embedded PostgreSQL of a session running as root serves its data as an
    unprivileged account, which must be able to reach its data folder, so a second test run
    started meanwhile (another terminal, another checkout) would cut a running server off from
    its own files. A folder made by `mkdtemp` is this session's alone."""
    if config.option.basetemp:
        return
    own = tempfile.mkdtemp(prefix="exo-pytest-")
    config.stash[_OWN_BASETEMP] = own
    config.option.basetemp = own


def pytest_unconfigure(config: pytest.Config) -> None:
    own = config.stash.get(_OWN_BASETEMP, None)
    if own is not None:
        shutil.rmtree(own, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def shared_model_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every stack of the session shares one encoder cache, so the model is exported to ONNX
    once per session rather than once per stack (a user's stack exports once, ever)."""
    if "EXO_EMBEDDING_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["EXO_EMBEDDING_CACHE_DIR"] = str(tmp_path_factory.mktemp("models"))
    try:
        yield
    finally:
        os.environ.pop("EXO_EMBEDDING_CACHE_DIR", None)


@pytest.fixture(scope="session", autouse=True)
def no_scheduled_maintenance() -> Iterator[None]:
    """Every stack a test starts (the session stack and the ones fault, scale and CLI tests
    start themselves, whose processes inherit this environment) runs no maintenance schedule
    and no start-up pass: jobs that consolidate, decay or archive would change the rows a test
    asserts on. A run that sets EXO_MAINTENANCE_SCHEDULER keeps its choice; a test about
    schedules passes EXO_MAINTENANCE_SCHEDULER=true to the process it starts."""
    if "EXO_MAINTENANCE_SCHEDULER" in os.environ:
        yield
        return
    os.environ["EXO_MAINTENANCE_SCHEDULER"] = "false"
    try:
        yield
    finally:
        os.environ.pop("EXO_MAINTENANCE_SCHEDULER", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs a real server as `integration`, so `-m "not integration"`
    runs the pure unit tests only."""
    for item in items:
        if _INTEGRATION_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedPostgres]:
    """A PostgreSQL server for the whole session (fsync off: test data need not survive a crash).

    Several whole stacks share it at once (each process keeps a pool), so it allows more
    connections than a single user's server needs."""
    server = EmbeddedPostgres(
        tmp_path_factory.mktemp("postgres") / "data", fsync=False, max_connections=400
    )
    with server:
        yield server


@pytest.fixture(scope="session")
def migrated_template(postgres_server: EmbeddedPostgres) -> str:
    """Name of a database migrated to head, used as the template for per-test databases."""
    with psycopg.connect(postgres_server.admin_dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(TEMPLATE_DATABASE)
            )
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(TEMPLATE_DATABASE)))
    migrate.upgrade(postgres_server.dsn_for(TEMPLATE_DATABASE))
    return TEMPLATE_DATABASE


@pytest.fixture
def database_url(postgres_server: EmbeddedPostgres, migrated_template: str) -> Iterator[str]:
    """DSN of a fresh database with every migration applied; dropped after the test."""
    name = f"exo_test_{os.getpid()}_{next(_db_counter)}"
    with psycopg.connect(postgres_server.admin_dsn, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(name), sql.Identifier(migrated_template)
            )
        )
    try:
        yield postgres_server.dsn_for(name)
    finally:
        with psycopg.connect(postgres_server.admin_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest_asyncio.fixture
async def db_pool(database_url: str) -> AsyncIterator[Pool]:
    """An open dict-row connection pool on the test's fresh database."""
    pool = await open_pool(database_url, min_size=1, max_size=4)
    try:
        yield pool
    finally:
        await pool.close()


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNats]:
    """A NATS server with JetStream for the whole session."""
    with EmbeddedNats(tmp_path_factory.mktemp("nats")) as server:
        yield server


@pytest_asyncio.fixture
async def nats_url(nats_server: EmbeddedNats) -> AsyncIterator[str]:
    """URL of the session's NATS server, with every JetStream stream deleted before the test so
    each test starts from an empty JetStream."""
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        for name in [info.config.name for info in await js.streams_info()]:
            if name:
                with contextlib.suppress(NotFoundError):
                    await js.delete_stream(name)
    finally:
        await nc.close()
    yield nats_server.url


# Qdrant, Meilisearch and Postgres servers for the server adapters' tests: the URL a run gives,
# else the compose image started in a container, else a skip that says why.
from exocortex.testing.containers import (  # noqa: E402
    meilisearch_server,
    postgres_container,
    qdrant_server,
)

# The whole stack, for end-to-end and API tests, and keyed gateways (the threat model's keys)
# in front of it, shared by the tests that ask for one.
from exocortex.testing.keyed import keyed, keyed_gateways  # noqa: E402
from exocortex.testing.stack import (  # noqa: E402
    api,
    change_settings,
    embedding_client,
    exo_stack,
    gateway_url,
    namespace,
    stack_db,
)

__all__ = [
    "api",
    "change_settings",
    "embedding_client",
    "exo_stack",
    "gateway_url",
    "keyed",
    "keyed_gateways",
    "meilisearch_server",
    "namespace",
    "postgres_container",
    "qdrant_server",
    "stack_db",
]
