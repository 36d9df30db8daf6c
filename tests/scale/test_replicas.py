"""Replicas share the work and losing one loses nothing: the session stack plus a second ingest,
a second enrichment and a second maintenance process (the same modules, the same Postgres and
NATS), two gateways (one in front of each ingest), 200 stores and 20 searches over REST,
and the second replica of each part killed (SIGKILL) half-way through.

Afterwards: every acknowledged store is readable and findable, each memory exists once, each
stored event was written once, enrichment ran at most once per change of a memory, and every
search's side effects were recorded. Retrieval stays single: the session stack's indexes are
the embedded engines, which only one process may open (docs/scaling.md).
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

from exocortex.core.bus import subjects
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import events_pb2
from exocortex.testing.gateway import serve_gateway
from exocortex.testing.processes import listening_process

pytestmark = pytest.mark.integration

# Enough for both gateways, ingests, enrichments and maintenances to share the work before and
# after the kill half-way; the full-size run (2,000) is tests/bench/full_size_faults.py.
STORES = int(os.environ.get("EXO_TEST_REPLICA_STORES", "200"))
SEARCH_EVERY = 10
KILL_AFTER = STORES // 2
CONCURRENCY = 8
ATTEMPTS = 6
DRAIN_TIMEOUT = 600.0

SUBJECTS = ["the billing export", "the search cache", "the onboarding flow", "the nightly backup"]
SUBJECTS += ["the mobile release", "the vendor contract", "the staging cluster", "the API quota"]
VERBS = ["moved to", "was rewritten in", "now depends on", "was split away from", "replaced"]
OBJECTS = ["Postgres 17", "a Rust worker", "the payments team", "a cron job", "an S3 bucket"]
OBJECTS += ["the legacy monolith", "a feature flag", "the analytics warehouse", "Kafka"]
REASONS = ["after the March outage", "to cut the cloud bill", "because customers asked"]
REASONS += ["for the audit", "since latency doubled", "to unblock the Berlin office"]
PEOPLE = ["Ada", "Grace", "Linus", "Barbara", "Ken", "Margaret", "Dennis", "Frances"]
ASIDES = ["The dashboard still shows the old numbers.", "Nobody has tested the rollback."]
ASIDES += ["Finance wants a cost estimate by Friday.", "The docs page is out of date."]
ASIDES += ["Two customers reported timeouts yesterday.", "We might revisit this in Q3."]
ASIDES += ["Security signed off on the design.", "The intern wrote the first draft."]


def memory_text(rng: random.Random, index: int) -> str:
    """A note that differs in meaning from its neighbours, not only in a number, so that semantic
    dedup folds few of them (any it folds are accounted for by id)."""
    parts = [
        f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"{rng.choice(REASONS)}; {rng.choice(PEOPLE)} owns it."
        for _ in range(rng.choice([2, 3, 4]))
    ]
    parts.insert(rng.randrange(len(parts)), rng.choice(ASIDES))
    return " ".join(parts) + f" Ticket {index}-{rng.randrange(1_000_000)}."


@dataclass
class Ledger:
    """What the clients were told."""

    namespace: str
    stored: dict[int, dict[str, Any]] = field(default_factory=dict)
    actions: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    # Stores acknowledged through each gateway (0: the stack's ingest, 1: the second ingest).
    through: Counter[int] = field(default_factory=Counter)
    searches: list[str] = field(default_factory=list)
    search_errors: int = 0


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    address: str


@contextmanager
def second_replica(stack: Stack, part: str, tmp: Path) -> Iterator[Replica]:
    """Another process of ``part`` on the stack's Postgres and NATS, on ports of its own."""
    port, metrics = free_port(), free_port()
    upper = part.upper()
    env = stack.env() | {
        f"EXO_{upper}_LISTEN": f"127.0.0.1:{port}",
        f"EXO_{upper}_METRICS_PORT": str(metrics),
    }
    with listening_process(
        [sys.executable, "-m", f"exocortex.{part}"],
        env,
        port,
        what=f"the second {part}",
        start_timeout=180.0,
        log_path=tmp / f"{part}-2.log",
    ) as process:
        yield Replica(process, f"127.0.0.1:{port}")


async def store(
    clients: list[httpx.AsyncClient], ledger: Ledger, index: int, body: dict[str, Any]
) -> None:
    """Store through one gateway; on a 5xx or a dropped connection, again through the next
    (what a client behind a load balancer does)."""
    for attempt in range(ATTEMPTS):
        client = clients[(index + attempt) % len(clients)]
        try:
            response = await client.post("/api/memories", json=body)
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code < 500:
            assert response.status_code == 201, response.text
            stored = response.json()
            ledger.stored[index] = stored
            ledger.actions[stored["dedup_action"]] += 1
            ledger.through[(index + attempt) % len(clients)] += 1
            return
        ledger.retries += 1
        await asyncio.sleep(0.2 * (attempt + 1))
    pytest.fail(f"store {index} failed through every gateway {ATTEMPTS} times")


async def search(clients: list[httpx.AsyncClient], ledger: Ledger, index: int, query: str) -> None:
    for attempt in range(ATTEMPTS):
        client = clients[(index + attempt) % len(clients)]
        try:
            body = {"query": query, "namespace": ledger.namespace, "limit": 10}
            response = await client.post("/api/memories/search", json=body)
        except httpx.TransportError:
            response = None
        if response is not None and response.status_code == 200:
            ledger.searches.append(query)
            return
        ledger.search_errors += 1
        await asyncio.sleep(0.2 * (attempt + 1))
    pytest.fail(f"search {index} failed through every gateway {ATTEMPTS} times")


async def wait_for(
    what: str, check: Callable[[], Awaitable[tuple[bool, str]]], within: float = DRAIN_TIMEOUT
) -> None:
    deadline = time.monotonic() + within
    while True:
        done, detail = await check()
        if done:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {within:.0f} s: {detail}")
        await asyncio.sleep(2.0)


async def test_replicas_share_the_work_and_a_killed_one_loses_nothing(
    exo_stack: Stack, namespace: str, tmp_path: Path
) -> None:
    rng = random.Random(25)
    ledger = Ledger(namespace)
    bodies = [
        {"content": memory_text(rng, i), "namespace": namespace, "tags": ["scale-out"]}
        for i in range(STORES)
    ]
    async with await psycopg.AsyncConnection.connect(
        exo_stack.database_url, autocommit=True, row_factory=dict_row
    ) as db:
        cur = await db.execute("SELECT coalesce(max(id), 0) AS id FROM outbox")
        row = await cur.fetchone()
        assert row is not None
        first_outbox = int(row["id"])

        with ExitStack() as replicas:
            ingest = replicas.enter_context(second_replica(exo_stack, "ingest", tmp_path))
            enrichment = replicas.enter_context(second_replica(exo_stack, "enrichment", tmp_path))
            maintenance = replicas.enter_context(second_replica(exo_stack, "maintenance", tmp_path))
            async with serve_gateway(exo_stack, EXO_INGEST_ADDR=ingest.address) as second_url:
                timeout = httpx.Timeout(60.0)
                async with (
                    httpx.AsyncClient(base_url=exo_stack.gateway_url, timeout=timeout) as first,
                    httpx.AsyncClient(base_url=second_url, timeout=timeout) as second,
                ):
                    clients = [first, second]
                    started = time.monotonic()
                    queue: asyncio.Queue[int] = asyncio.Queue()
                    for i in range(STORES):
                        queue.put_nowait(i)
                    killed_at: list[float] = []

                    async def worker() -> None:
                        while not queue.empty():
                            i = queue.get_nowait()
                            await store(clients, ledger, i, bodies[i])
                            if i % SEARCH_EVERY == 0:
                                earlier = bodies[rng.randrange(i + 1)]["content"]
                                await search(clients, ledger, i, f"search {i}: {earlier}")
                            if len(ledger.stored) >= KILL_AFTER and not killed_at:
                                killed_at.append(time.monotonic() - started)
                                for replica in (ingest, enrichment, maintenance):
                                    replica.process.kill()

                    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
                    elapsed = time.monotonic() - started
                    assert killed_at, "the replicas were never killed"
                    for replica in (ingest, enrichment, maintenance):
                        assert replica.process.poll() is not None

                    await check_nothing_lost(db, clients, ledger, namespace)
                    await check_nothing_applied_twice(db, ledger, namespace, first_outbox)

    print(
        f"\nscale-out: {STORES} stores and {len(ledger.searches)} searches in {elapsed:.1f} s "
        f"({STORES / elapsed:.1f} stores/s); second replicas killed at {killed_at[0]:.1f} s; "
        f"{ledger.retries} store retries, {ledger.search_errors} search retries; "
        f"stores per ingest {dict(ledger.through)}; "
        f"dedup {dict(ledger.actions)}"
    )


async def check_nothing_lost(
    db: psycopg.AsyncConnection[dict[str, Any]],
    clients: list[httpx.AsyncClient],
    ledger: Ledger,
    namespace: str,
) -> None:
    assert len(ledger.stored) == STORES
    ids = {stored["id"] for stored in ledger.stored.values()}

    async def enriched() -> tuple[bool, str]:
        cur = await db.execute(
            "SELECT count(*) FILTER (WHERE enrichment_status = 'pending') AS pending, "
            "count(*) AS n FROM memories WHERE namespace = %s AND parent_id IS NULL "
            "AND is_active",
            (namespace,),
        )
        row = await cur.fetchone()
        assert row is not None
        return row["pending"] == 0, f"{row['pending']} of {row['n']} still pending"

    await wait_for("enrichment of every memory", enriched)
    cur = await db.execute("SELECT id FROM memories WHERE id = ANY(%s)", (list(ids),))
    # Every id a client was given is a memory (active, or superseded by a later store) ...
    assert {row["id"] for row in await cur.fetchall()} == ids
    cur = await db.execute(
        "SELECT id FROM memories WHERE namespace = %s AND parent_id IS NULL AND is_active",
        (namespace,),
    )
    # ... and no memory exists that no client was given.
    assert {row["id"] for row in await cur.fetchall()} <= ids

    # Every search's side effects were recorded, once per search whichever maintenance took
    # it (at least once: a batch the killed one had taken comes back to the other). A search
    # with results leaves access-log rows under its query hash; one without, a miss row.
    async def recorded() -> tuple[bool, str]:
        cur = await db.execute(
            "SELECT (SELECT count(DISTINCT a.query) FROM access_log a "
            "        JOIN memories m ON m.id = a.memory_id WHERE m.namespace = %s) "
            "     + (SELECT count(*) FROM search_misses WHERE namespace = %s) AS searches",
            (namespace, namespace),
        )
        row = await cur.fetchone()
        assert row is not None
        return row["searches"] >= len(ledger.searches), f"{row['searches']} recorded"

    await wait_for("every search to be recorded", recorded)
    _, detail = await recorded()
    assert detail == f"{len(ledger.searches)} recorded"

    # Searchable: an exact note finds its memory (through either gateway).
    active = [s for s in ledger.stored.values() if s["dedup_action"] == "created"]
    for n, stored in enumerate(random.Random(7).sample(active, min(50, len(active)))):
        body = {"query": stored["content"], "namespace": namespace, "limit": 10}

        async def found(
            stored: dict[str, Any] = stored, body: dict[str, Any] = body, n: int = n
        ) -> tuple[bool, str]:
            response = await clients[n % 2].post("/api/memories/search", json=body)
            assert response.status_code == 200, response.text
            hits = [hit["memory"]["id"] for hit in response.json()["results"]]
            return stored["id"] in hits, f"{stored['id']} not in {hits}"

        await wait_for("a stored memory to be searchable", found, within=120.0)


async def check_nothing_applied_twice(
    db: psycopg.AsyncConnection[dict[str, Any]], ledger: Ledger, namespace: str, first_outbox: int
) -> None:
    cur = await db.execute(
        "SELECT content_hash, count(*) AS n FROM memories WHERE namespace = %s "
        "AND parent_id IS NULL AND is_active GROUP BY content_hash HAVING count(*) > 1",
        (namespace,),
    )
    assert await cur.fetchall() == [], "a store was applied twice"

    cur = await db.execute("SELECT subject, payload FROM outbox WHERE id > %s", (first_outbox,))
    events: Counter[tuple[str, str]] = Counter()
    for row in await cur.fetchall():
        event = events_pb2.MemoryChanged.FromString(bytes(row["payload"]))
        if event.namespace == namespace:
            events[(row["subject"], event.memory_id)] += 1
    created = {s["id"] for s in ledger.stored.values() if s["dedup_action"] == "created"}
    stored_events = {
        memory_id: n
        for (subject, memory_id), n in events.items()
        if subject == subjects.MEMORY_STORED
    }
    # One stored event per memory created, none twice. A store whose first attempt committed
    # before its replica was killed comes back as skipped on the retry, with the id of the
    # memory that attempt created: its event is there too, once.
    given = {s["id"] for s in ledger.stored.values()}
    assert created <= set(stored_events) <= given
    assert set(stored_events.values()) == {1}
    # Enrichment ran at most once per change of a memory (its store and each update of it):
    # it announces a run only when the run changed the keywords (see check_nothing_lost for
    # every memory being enriched).
    for memory_id in created:
        changes = (
            events[(subjects.MEMORY_STORED, memory_id)]
            + events[(subjects.MEMORY_UPDATED, memory_id)]
        )
        assert events[(subjects.MEMORY_ENRICHED, memory_id)] <= changes, memory_id
