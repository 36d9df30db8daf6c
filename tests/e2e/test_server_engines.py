"""The stack on the servers compose.yaml runs: Postgres (pgvector), Qdrant and Meilisearch from
their official images, started with testcontainers, instead of the embedded engines. A memory
stored through the gateway is found by a search that ranks it in both the vector and the keyword
index, so both server adapters are in the path.

The servers are always containers this test starts: a stack owns the index servers it writes to
(its reconciler removes documents that its Postgres does not hold), so the URLs a run gives for
the adapters' contract tests (EXO_TEST_QDRANT_URL, EXO_TEST_MEILI_URL) are not used here.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from psycopg import sql

from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.testing.containers import Server

pytestmark = pytest.mark.e2e

GIVEN = ("EXO_TEST_QDRANT_URL", "EXO_TEST_MEILI_URL")


@pytest.fixture
def own_database(postgres_container: str) -> Iterator[str]:
    """A database of its own on the Postgres server, dropped afterwards."""
    name = f"exo_e2e_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_container, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = urlsplit(postgres_container)
    try:
        yield urlunsplit(parts._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(postgres_container, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def server_stack(
    request: pytest.FixtureRequest, tmp_path: Path, own_database: str
) -> Iterator[Stack]:
    given = [name for name in GIVEN if os.environ.get(name)]
    if given:
        pytest.skip(
            f"{', '.join(given)} set: this test runs the stack only on servers it starts itself"
        )
    qdrant: Server = request.getfixturevalue("qdrant_server")
    meili: Server = request.getfixturevalue("meilisearch_server")
    config = StackConfig.with_free_ports(
        tmp_path / "data",
        database_url=own_database,
        mcp_port=0,
        extra_env={
            "EXO_QDRANT_URL": qdrant.url,
            "EXO_QDRANT_API_KEY": qdrant.api_key or "",
            "EXO_MEILI_URL": meili.url,
            "EXO_MEILI_MASTER_KEY": meili.api_key or "",
        },
    )
    with Stack(config) as stack:
        yield stack


async def test_store_then_search_on_the_compose_servers(server_stack: Stack) -> None:
    namespace = f"t-{uuid.uuid4().hex[:12]}"
    async with httpx.AsyncClient(base_url=server_stack.gateway_url, timeout=60.0) as api:
        stored = await api.post(
            "/api/memories",
            json={
                "content": "The harbour ferry timetable changes to winter hours in November.",
                "namespace": namespace,
            },
        )
        assert stored.status_code == 201, stored.text
        assert stored.json()["indexed"] is True
        memory_id = stored.json()["id"]
        found = await api.post(
            "/api/memories/search",
            json={"query": "when does the ferry timetable change", "namespace": namespace},
        )
    assert found.status_code == 200, found.text
    results = found.json()["results"]
    assert [r["memory"]["id"] for r in results][:1] == [memory_id], results
    breakdown = results[0]["score_breakdown"]
    assert breakdown["vector_rank"] == 1, breakdown
    assert breakdown["keyword_rank"] == 1, breakdown
    # The embedded engines, had they run, would have made these folders.
    data = server_stack.config.data_dir / "indexes"
    assert not (data / "qdrant").exists(), "the stack ran the embedded vector engine"
    assert not (data / "tantivy").exists(), "the stack ran the embedded keyword engine"
