"""The reconciler repairs the indexes from Postgres, on a stack of its own: documents lost from
an index come back, stale ones are rewritten, and documents of archived or deleted memories
leave, both when retrieval starts again after the indexes were damaged while it was down and,
periodically, when Postgres changed without an event reaching the projector."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families
from psycopg.rows import dict_row

from exocortex.core.records import MemoryRecord
from exocortex.core.repositories import memories
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.indexes.qdrant_edge_index import QdrantEdgeVectorIndex
from exocortex.indexes.tantivy_index import TantivyKeywordIndex
from exocortex.retrieval.projection.projector import to_document
from exocortex.testing.rest import stored, wait_enriched
from exocortex.testing.settle import wait_projector_drained

pytestmark = pytest.mark.e2e

INTERVAL_SECONDS = 3
# Distinct topics (no semantic dedup between them), each with a token only it contains.
TEXTS = {
    "lost_keyword": "The greenhouse thermostat alpqx1 was recalibrated after the frost warning.",
    "lost_vector": "Our quarterly tax filing bravq2 goes to the accountant on the fifth of May.",
    "stale_keyword": "The bicycle chain charq3 was oiled before the mountain trail ride.",
    "stale_vector": "Grandmother's lasagne recipe delq4 needs two more layers of bechamel sauce.",
    "archived": "The office printer echoq5 jams whenever duplex mode is switched on.",
    "deleted": "Flight UA foxq6 to Lisbon departs from terminal two at dawn.",
}


@pytest.fixture(scope="module")
def repair_stack(
    postgres_server: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    name = f"exo_reconcile_{uuid.uuid4().hex[:6]}"
    postgres_server.ensure_database(name)
    config = StackConfig.with_free_ports(
        Path(tmp_path_factory.mktemp("reconcile")),
        database_url=postgres_server.dsn_for(name),
        extra_env={"EXO_RETRIEVAL_RECONCILE_INTERVAL_SECONDS": str(INTERVAL_SECONDS)},
    )
    stack = Stack(config)
    stack.start(timeout=300)
    try:
        yield stack
    finally:
        stack.stop()


@pytest_asyncio.fixture
async def client(repair_stack: Stack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=repair_stack.gateway_url, timeout=60.0) as c:
        yield c


async def _repaired(stack: Stack) -> dict[tuple[str, str], float]:
    """exo_reconciler_repaired_total by (index, reason), read from retrieval's metrics."""
    port = stack.config.metrics_ports["retrieval"]
    async with httpx.AsyncClient(timeout=5.0) as c:
        text = (await c.get(f"http://127.0.0.1:{port}/metrics")).text
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "exo_reconciler_repaired":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    out[(sample.labels["index"], sample.labels["reason"])] = sample.value
    return out


async def _listening(stack: Stack) -> bool:
    try:
        await _repaired(stack)
    except httpx.HTTPError:
        return False
    return True


async def _ranks(
    client: httpx.AsyncClient, namespace: str, query: str, memory_id: str
) -> set[str] | None:
    """Which index ranks found ``memory_id`` for ``query`` (None: not in the results).

    Just after retrieval restarts, the gateway's channel to it may still be waiting out its
    reconnect backoff (up to 2 s): searches then get a 503 "try again shortly", as
    docs/operations.md says. Those are retried here; anything else fails the test."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        reply = await client.post(
            "/api/memories/search", json={"query": query, "namespace": namespace, "limit": 10}
        )
        if reply.status_code != 503 or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.25)
    assert reply.status_code == 200, reply.text
    for r in reply.json()["results"]:
        if r["memory"]["id"] == memory_id:
            # A rank is null when that index did not find the memory.
            return {k for k in ("vector_rank", "keyword_rank") if r["score_breakdown"][k]}
    return None


async def _eventually(check: Any, seconds: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while asyncio.get_running_loop().time() < deadline:
        if await check():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{check.__name__} did not hold within {seconds:.0f} s")


async def _rows(stack: Stack, ids: list[str]) -> dict[str, MemoryRecord]:
    async with await psycopg.AsyncConnection.connect(
        stack.database_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await memories.get_records(conn, ids, with_embedding=True)


async def test_on_start_the_reconciler_repairs_indexes_damaged_while_retrieval_was_down(
    repair_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"t-{uuid.uuid4().hex[:12]}"
    ids: dict[str, str] = {}
    for key, text in TEXTS.items():
        reply = await stored(client, content=text, namespace=namespace)
        assert reply["dedup_action"] == "created", reply
        assert reply["indexed"] is True
        ids[key] = reply["id"]
    for memory_id in ids.values():
        # Enrichment moves versions on; done before the damage, so nothing else changes them.
        await wait_enriched(client, memory_id)
    before = await _rows(repair_stack, list(ids.values()))
    archived = await client.post(f"/api/memories/{ids['archived']}/archive")
    assert archived.status_code == 200, archived.text
    deleted = await client.delete(f"/api/memories/{ids['deleted']}")
    assert deleted.status_code in (200, 204), deleted.text
    gone = {ids[k]: TEXTS[k] for k in ("archived", "deleted")}

    async def projected_away() -> bool:
        return await _absent(client, namespace, gone)

    await _eventually(projected_away, seconds=10)

    await wait_projector_drained(repair_stack)

    # Damage the indexes while retrieval is down, with no event to tell it: lost documents,
    # documents at an older version, documents whose memory is archived or gone.
    assert repair_stack.stop_part("retrieval") == 0
    indexes = repair_stack.config.data_dir / "indexes"
    keyword = TantivyKeywordIndex(indexes / "tantivy")
    vector = QdrantEdgeVectorIndex(indexes / "qdrant", 384)
    try:
        docs = {key: to_document(before[ids[key]]) for key in ids}
        await keyword.delete([ids["lost_keyword"]])
        await vector.delete([ids["lost_vector"]])
        old = docs["stale_keyword"]
        await keyword.upsert([replace(old, version=old.version - 1, content="zyzzyva wombat")])
        old = docs["stale_vector"]
        # Older than the version before the enrichment: that one the vector index holds by
        # design (an enrichment changes keywords only; see repository.vector_versions).
        await vector.upsert([replace(old, version=old.version - 2, vector=docs["deleted"].vector)])
        for key in ("archived", "deleted"):
            await keyword.upsert([docs[key]])
            await vector.upsert([docs[key]])
        await keyword.flush()
        await vector.flush()
    finally:
        await keyword.close()
        await vector.close()
    repair_stack.start_part("retrieval")

    # The restarted process counts from zero: what it repaired, by index and reason.
    expected = {
        ("keyword", "missing"): 1,
        ("vector", "missing"): 1,
        ("keyword", "stale"): 1,
        ("vector", "stale"): 1,
        ("keyword", "orphaned"): 2,
        ("vector", "orphaned"): 2,
    }

    async def reconciled() -> bool:
        try:
            return sum((await _repaired(repair_stack)).values()) >= sum(expected.values())
        except httpx.HTTPError:
            return False  # not listening yet

    # Retrieval loads its query model before it listens: on a busy machine that alone can take
    # most of a minute, so the bound is generous (a passing run takes seconds).
    try:
        await _eventually(reconciled, seconds=180)
    except AssertionError as exc:
        log = repair_stack.log_dir / "retrieval.log"
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        listening = await _listening(repair_stack)
        counted = await _repaired(repair_stack) if listening else "not listening"
        raise AssertionError(f"{exc}; repaired: {counted}; retrieval's log:\n{tail}") from exc
    assert await _repaired(repair_stack) == expected

    # Searches see the repaired state.
    assert "keyword_rank" in (await _ranks(client, namespace, "alpqx1", ids["lost_keyword"]) or ())
    assert "vector_rank" in (
        await _ranks(client, namespace, TEXTS["lost_vector"], ids["lost_vector"]) or set()
    )
    assert await _ranks(client, namespace, "zyzzyva wombat", ids["stale_keyword"]) in (
        None,
        {"vector_rank"},
    )
    assert "keyword_rank" in (await _ranks(client, namespace, "charq3", ids["stale_keyword"]) or ())
    assert await _absent(client, namespace, gone)


async def _absent(client: httpx.AsyncClient, namespace: str, gone: dict[str, str]) -> bool:
    """No memory of ``gone`` (id → its text) is found by its own text or token, in either
    index."""
    for memory_id, text in gone.items():
        token = next(w for w in text.split() if any(c.isdigit() for c in w))
        for query in (text, token):
            if await _ranks(client, namespace, query, memory_id) is not None:
                return False
    return True


async def test_periodic_run_follows_postgres_changes_no_event_announced(
    repair_stack: Stack, client: httpx.AsyncClient
) -> None:
    namespace = f"t-{uuid.uuid4().hex[:12]}"
    hidden = await stored(
        client, content="The garden shed key golfq7 hangs behind the door.", namespace=namespace
    )
    edited = await stored(
        client, content="The violin lesson hotelq8 moved to Thursday evenings.", namespace=namespace
    )
    assert await _ranks(client, namespace, "golfq7", hidden["id"])
    async with await psycopg.AsyncConnection.connect(
        repair_stack.database_url, autocommit=True
    ) as conn:
        # Changed behind the write path's back: no outbox event, so only the reconciler sees it.
        await conn.execute(
            "UPDATE memories SET is_active = false, version = version + 1 WHERE id = %s",
            (hidden["id"],),
        )
        await conn.execute(
            "UPDATE memories SET content = content || ' Bring the quokka rosin.', "
            "version = version + 1 WHERE id = %s",
            (edited["id"],),
        )

    async def archived_left() -> bool:
        return await _ranks(client, namespace, "golfq7", hidden["id"]) is None

    async def edit_found() -> bool:
        ranks = await _ranks(client, namespace, "quokka", edited["id"])
        return ranks is not None and "keyword_rank" in ranks

    # Within a couple of intervals (one run may just have started before the change).
    await _eventually(archived_left, seconds=INTERVAL_SECONDS * 4)
    await _eventually(edit_found, seconds=INTERVAL_SECONDS * 4)
