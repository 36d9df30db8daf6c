"""Qdrant, Meilisearch and Postgres servers for the tests of the server adapters and of a stack
on them.

Each fixture gives the server a run names (``EXO_TEST_QDRANT_URL``, ``EXO_TEST_MEILI_URL``,
``EXO_TEST_POSTGRES_URL``, e.g. the compose stack's), else starts the official image with
testcontainers where a Docker engine is reachable, at the tag compose.yaml pins (one source of
truth for both), once per session; else the test skips and says why.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import yaml

from exocortex.testing import wait

# Images that start slowly on a busy machine (a first pull, a cold disk) still start in this time.
START_SECONDS = 180.0
_DEFAULT_DOCKER_HOST = "unix:///var/run/docker.sock"


@dataclass(frozen=True)
class Server:
    """A server to test against: where it listens and the key it wants (None: none)."""

    url: str
    api_key: str | None = None


def compose_file() -> Path:
    """The repository's compose.yaml, found upwards from this file (the harness is installed
    editable from the repository)."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "compose.yaml").is_file():
            return folder / "compose.yaml"
    raise FileNotFoundError("compose.yaml: not found above " + str(Path(__file__).parent))


def compose_image(service: str, compose: Path | None = None) -> str:
    """The image compose.yaml runs for ``service``, e.g. ``qdrant/qdrant:v1.19.1``."""
    spec = yaml.safe_load((compose or compose_file()).read_text())
    image: str = spec["services"][service]["image"]
    return image


@cache
def docker_unreachable() -> str | None:
    """Why no Docker engine can run containers here, or None when one answers."""
    where = os.environ.get("DOCKER_HOST") or _DEFAULT_DOCKER_HOST
    try:
        import docker
    except ImportError:
        return "the docker package is not installed (make install)"
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return f"no Docker engine reachable at {where} ({type(exc).__name__})"
    return None


def skip_reason(variable: str, what: str) -> str | None:
    """Why a test of ``what`` cannot run: neither ``variable`` nor a Docker engine."""
    cause = docker_unreachable()
    if cause is None:
        return None
    return f"{variable} is not set and {cause}: no {what} to test against"


def _start(image: str, port: int, env: dict[str, str]) -> tuple[Any, str, int]:
    """Start ``image`` with ``port`` published; return the container, host and host port."""
    from testcontainers.core.container import DockerContainer

    container = DockerContainer(image, env=env).with_exposed_ports(port).start()
    return container, container.get_container_host_ip(), int(container.get_exposed_port(port))


def _answers(url: str) -> bool:
    return httpx.get(url, timeout=5.0).status_code == 200


@pytest.fixture(scope="session")
def qdrant_server() -> Iterator[Server]:
    """A Qdrant server: ``EXO_TEST_QDRANT_URL`` (key: ``EXO_TEST_QDRANT_API_KEY``), else the
    compose image in a container, with an API key as in production."""
    url = os.environ.get("EXO_TEST_QDRANT_URL")
    if url:
        yield Server(url, os.environ.get("EXO_TEST_QDRANT_API_KEY"))
        return
    reason = skip_reason("EXO_TEST_QDRANT_URL", "Qdrant server")
    if reason:
        pytest.skip(reason)
    key = secrets.token_hex(16)
    container, host, port = _start(
        compose_image("qdrant"),
        6333,
        {"QDRANT__SERVICE__API_KEY": key, "QDRANT__TELEMETRY_DISABLED": "true"},
    )
    url = f"http://{host}:{port}"
    try:
        wait.until(
            lambda: _answers(f"{url}/readyz"),
            what=f"Qdrant at {url} is ready",
            seconds=START_SECONDS,
            retry_on=(httpx.TransportError,),
        )
        yield Server(url, key)
    finally:
        container.stop()


@pytest.fixture(scope="session")
def meilisearch_server() -> Iterator[Server]:
    """A Meilisearch server: ``EXO_TEST_MEILI_URL`` (key: ``EXO_TEST_MEILI_KEY``), else the
    compose image in a container, in production mode with a master key."""
    url = os.environ.get("EXO_TEST_MEILI_URL")
    if url:
        yield Server(url, os.environ.get("EXO_TEST_MEILI_KEY"))
        return
    reason = skip_reason("EXO_TEST_MEILI_URL", "Meilisearch server")
    if reason:
        pytest.skip(reason)
    key = secrets.token_hex(16)
    container, host, port = _start(
        compose_image("meilisearch"),
        7700,
        {"MEILI_ENV": "production", "MEILI_MASTER_KEY": key, "MEILI_NO_ANALYTICS": "true"},
    )
    url = f"http://{host}:{port}"
    try:
        wait.until(
            lambda: _answers(f"{url}/health"),
            what=f"Meilisearch at {url} is ready",
            seconds=START_SECONDS,
            retry_on=(httpx.TransportError,),
        )
        yield Server(url, key)
    finally:
        container.stop()


def _accepts(dsn: str) -> bool:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        return conn.execute("SELECT 1").fetchone() == (1,)


@pytest.fixture(scope="session")
def postgres_container() -> Iterator[str]:
    """The DSN of a Postgres server with pgvector: ``EXO_TEST_POSTGRES_URL``, else the compose
    image in a container. Tests that write to it use a database of their own."""
    url = os.environ.get("EXO_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    reason = skip_reason("EXO_TEST_POSTGRES_URL", "Postgres server")
    if reason:
        pytest.skip(reason)
    password = secrets.token_hex(16)
    container, host, port = _start(
        compose_image("postgres"),
        5432,
        {"POSTGRES_USER": "exocortex", "POSTGRES_PASSWORD": password, "POSTGRES_DB": "exocortex"},
    )
    try:
        dsn = f"postgresql://exocortex:{password}@{host}:{port}/exocortex"
        # While the image initialises the database its temporary server listens on no TCP
        # port, so a query answered over TCP comes from the server that stays up.
        wait.until(
            lambda: _accepts(dsn),
            what=f"Postgres at {host}:{port} accepts connections",
            seconds=START_SECONDS,
            retry_on=(psycopg.OperationalError,),
        )
        yield dsn
    finally:
        container.stop()
