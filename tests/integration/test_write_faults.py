"""Faults on the write path, on a stack of its own (parts are stopped and started again):
the embedding model away → a clean 503 and nothing written; NATS, the retrieval process (the
indexes) or enrichment away → writes are acknowledged, kept, and processed once they return;
NATS away during a search → the search answers and is counted once NATS returns; maintenance
away → a result fetched before its search is recorded still counts as useful, once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import nats
import psycopg
import pytest
import pytest_asyncio

from exocortex.core.bus import subjects
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.testing.rest import wait_enriched
from exocortex.testing.wait import until_async

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def fault_stack(
    postgres_server: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    name = f"exo_faults_{uuid.uuid4().hex[:6]}"
    postgres_server.ensure_database(name)
    config = StackConfig.with_free_ports(
        Path(tmp_path_factory.mktemp("faults")),
        database_url=postgres_server.dsn_for(name),
        # Short read-your-writes waits: several stores here are expected not to be indexed.
        extra_env={"EXO_STORE_WAIT_MS": "1000"},
    )
    stack = Stack(config)
    stack.start(timeout=300)
    try:
        yield stack
    finally:
        stack.stop()


@pytest_asyncio.fixture
async def client(fault_stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=fault_stack.gateway_url, timeout=60.0) as c:
        yield c


@contextmanager
def _stopped(stack: Stack, part: str) -> Iterator[None]:
    """`part` stopped (it must stop on its own, in time) for the block, then started again."""
    assert stack.stop_part(part) == 0
    try:
        yield
    finally:
        stack.start_part(part)


async def _store(client: httpx.AsyncClient, namespace: str, content: str) -> dict[str, Any]:
    """Store a memory that must be accepted (201); its reply."""
    reply = await client.post("/api/memories", json={"content": content, "namespace": namespace})
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def _waiting_for_enrichment(stack: Stack) -> bool:
    """Nothing left in the outbox, and the enrichment worker's durable has events it has not
    taken (it is stopped)."""
    if _count(stack, "SELECT count(*) FROM outbox WHERE published_at IS NULL"):
        return False
    nc = await nats.connect(stack.nats_url)
    try:
        info = await nc.jetstream().consumer_info(subjects.STREAM, subjects.ENRICHMENT_WORKER)
    finally:
        await nc.close()
    return bool(info.num_pending)


def _count(stack: Stack, sql: str, *params: Any) -> int:
    with psycopg.connect(stack.database_url) as conn:
        row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


async def _eventually_found(
    client: httpx.AsyncClient, namespace: str, query: str, memory_id: str
) -> None:
    for _ in range(600):
        reply = await client.post(
            "/api/memories/search", json={"query": query, "namespace": namespace}
        )
        if reply.status_code == 200 and any(
            r["memory"]["id"] == memory_id for r in reply.json()["results"]
        ):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{memory_id} never became searchable")


async def test_embedding_down_fails_fast_and_writes_nothing(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    outbox_before = _count(fault_stack, "SELECT count(*) FROM outbox")
    with _stopped(fault_stack, "embedding"):
        reply = await client.post(
            "/api/memories",
            json={"content": "Written while the model is away.", "namespace": namespace},
        )
        assert reply.status_code == 503
        assert "embedding service is unavailable" in reply.json()["detail"]
        imported = await client.post(
            "/api/memories/import",
            json={
                "memories": [
                    {"content": f"Import {i} while away.", "namespace": namespace} for i in range(3)
                ]
            },
        )
        assert imported.status_code == 503
        assert (
            _count(fault_stack, "SELECT count(*) FROM memories WHERE namespace = %s", namespace)
            == 0
        )
        assert _count(fault_stack, "SELECT count(*) FROM outbox") == outbox_before
    for _ in range(600):
        reply = await client.post(
            "/api/memories",
            json={"content": "Written once the model is back.", "namespace": namespace},
        )
        if reply.status_code == 201:
            break
        await asyncio.sleep(0.2)
    assert reply.status_code == 201


async def test_nats_down_keeps_writes_and_delivers_them_later(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    covered_before = await _projected(fault_stack, "covered")
    with _stopped(fault_stack, "nats"):
        memory = await _store(client, namespace, "The lighthouse keeper logs the fog horn hours.")
        # Searchable at once (projected ahead of its event); the event waits in the outbox.
        assert memory["indexed"] is True
        assert _count(fault_stack, "SELECT count(*) FROM outbox WHERE published_at IS NULL") >= 1
    await _eventually_found(client, namespace, "fog horn hours", memory["id"])
    await wait_enriched(client, memory["id"])
    # Its stored event, delivered once NATS was back, finds it written and writes nothing again.
    await until_async(
        lambda: _projected(fault_stack, "covered"),
        what="the projector finds the memory's late event already projected ahead",
        seconds=60,
        accept=lambda covered: covered > covered_before,
    )


async def _projected(stack: Stack, path: str) -> float:
    """exo_retrieval_projected_total{path} of the running retrieval."""
    port = stack.config.metrics_ports["retrieval"]
    async with httpx.AsyncClient(timeout=10) as http:
        text = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    for line in text.splitlines():
        if line.startswith(f'exo_retrieval_projected_total{{path="{path}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


async def test_nats_down_keeps_search_events_and_counts_them_later(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    """A search answers without NATS; its event (access counts) waits in the client's buffer
    and is recorded once NATS is back."""
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    memory_id = (await _store(client, namespace, "The harbour master logs the tide tables."))["id"]
    await _eventually_found(client, namespace, "tide tables harbour", memory_id)
    counted = "SELECT count(*) FROM access_log WHERE memory_id = %s AND kind = 'search'"
    for _ in range(100):  # the search that found it is recorded first
        if _count(fault_stack, counted, memory_id) >= 1:
            break
        await asyncio.sleep(0.1)
    before = _count(fault_stack, counted, memory_id)
    assert before >= 1

    with _stopped(fault_stack, "nats"):
        reply = await client.post(
            "/api/memories/search", json={"query": "tide tables", "namespace": namespace}
        )
        assert reply.status_code == 200, reply.text
        assert [r["memory"]["id"] for r in reply.json()["results"]] == [memory_id]
    for _ in range(300):
        if _count(fault_stack, counted, memory_id) > before:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the search made while NATS was down was never recorded")


async def test_a_result_fetched_before_its_search_is_recorded_counts_as_useful_once(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    """The maintenance service records a search's impressions a moment later; a client that
    fetches a result at once (here: while maintenance is away) still counts one use."""
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    memory = await _store(client, namespace, "The ferry leaves the harbour at half past six.")
    with _stopped(fault_stack, "maintenance"):
        reply = await client.post(
            "/api/memories/search", json={"query": "ferry departure", "namespace": namespace}
        )
        assert [r["memory"]["id"] for r in reply.json()["results"]] == [memory["id"]]
        for _ in range(2):
            fetched = await client.get(f"/api/memories/{memory['id']}")
            assert fetched.json()["useful_count"] == 0
    useful = "SELECT useful_count FROM memories WHERE id = %s"
    for _ in range(300):
        if _count(fault_stack, useful, memory["id"]) == 1:
            break
        await asyncio.sleep(0.1)
    assert _count(fault_stack, useful, memory["id"]) == 1
    # The search's impression went into that use: fetching again counts nothing more.
    assert (await client.get(f"/api/memories/{memory['id']}")).json()["useful_count"] == 1
    served = "SELECT count(*) FROM search_impressions WHERE memory_id = %s"
    assert _count(fault_stack, served, memory["id"]) == 0


async def test_retrieval_down_keeps_writes_and_indexes_them_later(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    with _stopped(fault_stack, "retrieval"):
        memory = await _store(client, namespace, "The greenhouse vents open above 28 degrees.")
        assert memory["indexed"] is False
        assert memory["dedup_action"] == "created"
    await _eventually_found(client, namespace, "greenhouse vents temperature", memory["id"])
    await wait_enriched(client, memory["id"])


async def test_enrichment_down_leaves_memories_pending_until_it_returns(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    with _stopped(fault_stack, "enrichment"):
        memory = await _store(client, namespace, "Our billing service uses PostgreSQL and Redis.")
        # The store's event is in the stream and waits, untaken, for enrichment's durable.
        await until_async(
            lambda: _waiting_for_enrichment(fault_stack),
            what="the stored event waits in the enrichment worker's queue",
            seconds=60,
        )
        assert (await client.get(f"/api/memories/{memory['id']}")).json()[
            "enrichment_status"
        ] == "pending"
    await wait_enriched(client, memory["id"])
    assert (
        _count(
            fault_stack, "SELECT count(*) FROM memory_entities WHERE memory_id = %s", memory["id"]
        )
        >= 2
    )


async def test_a_killed_retrieval_keeps_what_it_indexed_without_a_flush(
    fault_stack: Stack, client: httpx.AsyncClient
) -> None:
    """The projector acks a batch without flushing the vector engine (its flush stalls
    searches); what it applied must survive a crash of retrieval all the same."""
    namespace = f"f-{uuid.uuid4().hex[:8]}"
    memory = await _store(client, namespace, "Bees navigate by the angle of the sun.")
    assert memory["indexed"] is True
    # A search right away keeps the vector engine busy, so its idle flush has not run yet.
    found = await client.post(
        "/api/memories/search", json={"query": "insect orientation", "namespace": namespace}
    )
    assert found.status_code == 200
    fault_stack.kill_part("retrieval")
    fault_stack.start_part("retrieval")
    # Found by meaning alone (no word in common): from the vector index, not the keywords.
    for _ in range(600):
        reply = await client.post(
            "/api/memories/search",
            json={"query": "how do insects find their way", "namespace": namespace},
        )
        if reply.status_code == 200 and reply.json()["results"]:
            break
        await asyncio.sleep(0.1)
    results = reply.json()["results"]
    assert [r["memory"]["id"] for r in results] == [memory["id"]]
    assert results[0]["score_breakdown"]["vector_rank"] == 1
