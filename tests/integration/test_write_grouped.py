"""Concurrent single stores share one transaction (group commit, see ingest.store.group) and
enrichment works in batches, on the real stack. What must still hold for every store: answered
201 with ``indexed: true`` means searchable at once; each memory is stored once with exactly one
``stored`` event; each is enriched once, and (its keywords being complete from the store on)
with no new version and no ``enriched`` event."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import httpx
import psycopg

from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import events_pb2
from exocortex.testing.rest import wait_enriched

TOPICS = (
    "the greenhouse irrigation valve sticks when the pressure drops below two bar",
    "Ada Lovelace reviewed the compiler backend at Acme Labs on Tuesday",
    "a sourdough starter needs feeding twice a day in summer",
    "the Postgres replica lags during the nightly backup window",
    "tide tables for the harbour in March show a spring tide on the 14th",
    "the NATS consumer redelivers unacked messages after a crash",
    "the bicycle's rear derailleur needs a new cable before the race",
    "our Kubernetes ingress drops websocket connections after sixty seconds",
)
N = 32


def _events(stack: Stack, subject: str, ids: set[str]) -> Counter[str]:
    """How many outbox events of ``subject`` name each of ``ids``."""
    with psycopg.connect(stack.database_url) as conn:
        rows = conn.execute("SELECT payload FROM outbox WHERE subject = %s", (subject,)).fetchall()
    counts: Counter[str] = Counter()
    for (payload,) in rows:
        event = events_pb2.MemoryChanged.FromString(bytes(payload))
        if event.memory_id in ids:
            counts[event.memory_id] += 1
    return counts


async def _store(api: httpx.AsyncClient, namespace: str, i: int) -> dict[str, Any]:
    # A tag of its own: semantic dedup only folds texts that share a tag, so each is created.
    reply = await api.post(
        "/api/memories",
        json={
            "content": f"Note {i} (ref zq{i:04d}): {TOPICS[i % len(TOPICS)]}.",
            "namespace": namespace,
            "tags": [f"grouped-{i}"],
        },
    )
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def test_concurrent_stores_are_each_searchable_on_return_and_stored_once(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    stored = await asyncio.gather(*(_store(api, namespace, i) for i in range(N)))
    ids = [m["id"] for m in stored]
    assert len(set(ids)) == N
    assert all(m["dedup_action"] == "created" and m["indexed"] for m in stored)

    # Read-your-writes: each answered store is found by its own words at once.
    async def found(i: int, memory_id: str) -> bool:
        reply = await api.post(
            "/api/memories/search",
            json={"query": f"zq{i:04d}", "namespace": namespace, "limit": 5, "compact": True},
        )
        assert reply.status_code == 200, reply.text
        return memory_id in [r["id"] for r in reply.json()["results"]]

    hits = await asyncio.gather(*(found(i, memory_id) for i, memory_id in enumerate(ids)))
    assert all(hits), [ids[i] for i, hit in enumerate(hits) if not hit]

    with psycopg.connect(exo_stack.database_url) as conn:
        (rows,) = conn.execute(
            "SELECT count(*) FROM memories WHERE namespace = %s AND parent_id IS NULL",
            (namespace,),
        ).fetchone()  # type: ignore[misc]
    assert rows == N
    assert _events(exo_stack, "exo.memory.stored", set(ids)) == Counter(dict.fromkeys(ids, 1))

    # Enriched in batches, each memory once. The write path gave each the keywords enrichment
    # computes (the entity names in "Ada Lovelace ... Acme Labs" included), so none needs a new
    # version or an ``enriched`` event for the indexes to apply again.
    enriched = await asyncio.gather(*(wait_enriched(api, memory_id) for memory_id in ids))
    assert all(m["version"] == 1 for m in enriched)
    assert [m["keywords"] for m in enriched] == [m["keywords"] for m in stored]
    assert _events(exo_stack, "exo.memory.enriched", set(ids)) == Counter()


async def test_identical_concurrent_stores_still_give_one_memory(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    """Identical texts in one group trip the unique index; the group is retried store by store,
    so the losers take the skip path as without grouping."""
    body = {
        "content": "The grouped identical note about the harbour crane.",
        "namespace": namespace,
    }
    others = [
        {"content": f"Unrelated note {i} about topic zx{i:03d}.", "namespace": namespace,
         "tags": [f"other-{i}"]}
        for i in range(8)
    ]  # fmt: skip
    replies = await asyncio.gather(
        *(api.post("/api/memories", json=b) for b in [body] * 12 + others)
    )
    assert all(r.status_code == 201 for r in replies), [r.text for r in replies]
    same = [r.json() for r in replies[:12]]
    assert len({m["id"] for m in same}) == 1
    assert sorted(m["dedup_action"] for m in same).count("created") == 1
    assert all(r.json()["dedup_action"] == "created" for r in replies[12:])
    with psycopg.connect(exo_stack.database_url) as conn:
        (rows,) = conn.execute(
            "SELECT count(*) FROM memories WHERE namespace = %s AND parent_id IS NULL",
            (namespace,),
        ).fetchone()  # type: ignore[misc]
    assert rows == 9
