"""A lost index comes back from Postgres, on a stack of its own: retrieval is stopped, its
index directories under the data directory are deleted (a lost disk, a wiped volume), and
search finds every memory in each index as before, once the indexes are rebuilt: the same
memories from each index for each query, at the same vector rank, and at the same keyword rank
but for memories whose keyword scores were within a few percent of each other. (BM25's
statistics count a replaced document until the engine merges its segment away, so a rebuilt
keyword index, which has none, scores near-ties a hair differently. The final order is not
compared either: it also moves with the accesses that the test's own searches record, which is
not the indexes' doing.)

Retrieval rebuilds by itself: its reconciler runs on start and writes every document an index
lacks. The reindex job (``POST /api/maintenance/reindex``, the ExoIndexDrift runbook action) is
the same repair on demand; it is proven here while the reconciler's turn (its advisory lock) is
held elsewhere, as another replica would hold it, so the loss is visible until the job runs."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from psycopg import sql

from exocortex.core.bus import subjects
from exocortex.core.runtime.postgres import EmbeddedPostgres
from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.testing.settings import apply_settings
from exocortex.testing.wait import until

NAMESPACE = "reindex"
# Several memories per topic, so each query's top 10 is a real ranking, not everything.
FACTS = [
    "The greenhouse thermostat keeps the seedlings at 21 degrees overnight.",
    "Tomato seedlings are moved from the greenhouse to the beds in mid May.",
    "The greenhouse vents open automatically above 28 degrees.",
    "Basil is sown in the greenhouse in March and potted on in April.",
    "Slugs are kept off the lettuce with a copper strip around the raised bed.",
    "The compost heap is turned every second Sunday in summer.",
    "Rainwater from the shed roof fills the two garden butts.",
    "The apple trees are pruned in February while they are dormant.",
    "The deploy pipeline runs the integration suite before every release.",
    "Releases go out on Tuesdays after the change advisory review.",
    "A failed canary rolls the release back automatically within five minutes.",
    "Database migrations are applied by the deploy job before the new pods start.",
    "The staging cluster is rebuilt from scratch every Friday night.",
    "Feature flags let us ship code dark and turn it on per customer.",
    "Hotfixes skip the release train and go out the same day.",
    "The on-call engineer approves production deploys outside office hours.",
    "Sourdough starter is fed with rye flour at seven each evening.",
    "The bread dough proves overnight in the fridge for a sourer crumb.",
    "The oven is preheated to 250 degrees with the cast iron pot inside.",
    "Baguettes are scored at a shallow angle just before baking.",
    "The pizza dough rests 48 hours for better flavour and blistering.",
    "Croissant butter is laminated in three letter folds.",
    "Rye bread is baked in a tin because the dough is too sticky to shape.",
    "The bakery's flour is bought in 25 kg sacks from the mill.",
    "The telescope mirror was recoated with aluminium last spring.",
    "Jupiter's moons are visible through the small refractor on clear nights.",
    "The observatory dome motor was replaced after it jammed in January.",
    "Dark-sky nights are logged with a sky quality meter reading.",
    "The star party is held at the hilltop car park every new moon.",
    "Astrophotos are stacked from two hundred short exposures.",
]
QUERIES = [
    "when do the greenhouse seedlings go outside?",
    "how are production releases rolled out and rolled back?",
    "bread baking and proving dough",
    "telescope and stargazing equipment",
]
SEARCH_SECONDS = 120.0
RECONCILE_TURN = f"retrieval-reconciler:{subjects.RETRIEVAL_PROJECTOR}"


@pytest.fixture(scope="module")
def stack(
    postgres_server: EmbeddedPostgres, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """A stack whose retrieval can be stopped and its index directories deleted without
    touching the session's stack. No maintenance schedule: only the jobs run here run."""
    database = f"exo_reindex_{os.getpid()}"
    postgres_server.ensure_database(database)
    config = StackConfig.with_free_ports(
        tmp_path_factory.mktemp("reindex-stack"),
        database_url=postgres_server.dsn_for(database),
        extra_env={"EXO_MAINTENANCE_SCHEDULER": "false"},
    )
    config.mcp_port = 0
    running = Stack(config)
    running.start(timeout=300)
    try:
        yield running
    finally:
        running.stop()
        with psycopg.connect(postgres_server.admin_dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )


@pytest.fixture(scope="module")
def client(stack: Stack) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack.gateway_url, timeout=60.0) as http:
        yield http


def _apply_settings(stack: Stack, values: dict[str, str]) -> None:
    """Change settings and return once every service has dropped its cached ones (the async
    helper, run on a loop of its own: this module's fixtures are synchronous)."""

    async def apply() -> None:
        async with httpx.AsyncClient(base_url=stack.gateway_url, timeout=60.0) as api:
            await apply_settings(api, stack.nats_url, values)

    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, apply()).result()


@pytest.fixture(scope="module")
def stored(stack: Stack, client: httpx.Client) -> list[str]:
    """The memories, enriched, with a ranking that depends on the indexes and Postgres only:
    no frequency or recency signal, which the searches of the test itself would move."""
    _apply_settings(stack, {"scoring.frequency_weight": "0", "scoring.recency_weight": "0"})
    ids = []
    for fact in FACTS:
        reply = client.post("/api/memories", json={"content": fact, "namespace": NAMESPACE})
        assert reply.status_code == 201, reply.text
        assert reply.json()["indexed"] is True
        ids.append(str(reply.json()["id"]))
    deadline = time.monotonic() + 300
    for memory_id in ids:
        while client.get(f"/api/memories/{memory_id}").json()["enrichment_status"] != "done":
            assert time.monotonic() < deadline, f"memory {memory_id} was not enriched"
            time.sleep(0.2)
    return ids


def _search(client: httpx.Client, query: str, limit: int = 10) -> list[dict[str, Any]]:
    reply = client.post(
        "/api/memories/search", json={"query": query, "namespace": NAMESPACE, "limit": limit}
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json()["results"])


# For each query, each memory found: (vector rank, keyword rank, keyword score).
IndexRanks = dict[str, dict[str, tuple[int | None, int | None, float]]]
# Keyword scores closer than this (relative) may swap places in a rebuilt index.
NEAR_TIE = 0.05


def _index_ranks(client: httpx.Client) -> IndexRanks:
    """For each query, every memory found and its vector and keyword rank and keyword score:
    what the two indexes answered, free of the usage boosts that searches themselves move."""
    return {
        q: {
            r["memory"]["id"]: (
                r["score_breakdown"]["vector_rank"],
                r["score_breakdown"]["keyword_rank"],
                round(float(r["fts_score"]), 6),
            )
            for r in _search(client, q, limit=len(FACTS))
        }
        for q in QUERIES
    }


def _near(a: float, b: float) -> bool:
    return abs(a - b) <= NEAR_TIE * max(abs(a), abs(b))


def _assert_same_answers(after: IndexRanks, before: IndexRanks) -> None:
    """The rebuilt indexes answer as the lost ones did (see the module's docstring)."""
    assert after.keys() == before.keys()
    for query, was in before.items():
        now = after[query]
        vector_was = {m: v for m, (v, _, _) in was.items() if v is not None}
        vector_now = {m: v for m, (v, _, _) in now.items() if v is not None}
        assert vector_now == vector_was, f"{query!r}: vector ranks moved"
        keyword_was = {m: (k, s) for m, (_, k, s) in was.items() if k is not None}
        keyword_now = {m: (k, s) for m, (_, k, s) in now.items() if k is not None}
        assert keyword_now.keys() == keyword_was.keys(), f"{query!r}: other keyword hits"
        for a, (rank_a, score_a) in keyword_was.items():
            for b, (rank_b, score_b) in keyword_was.items():
                swapped = (rank_a < rank_b) != (keyword_now[a][0] < keyword_now[b][0])
                if a < b and swapped:
                    assert _near(score_a, score_b), (
                        f"{query!r}: {a} and {b} swapped keyword places, though their scores "
                        f"were {score_a} and {score_b}: {was} -> {now}"
                    )


def _from_an_index(result: dict[str, Any]) -> bool:
    breakdown = result["score_breakdown"]
    return bool(breakdown["vector_rank"] or breakdown["keyword_rank"])


def _settled_index_ranks(client: httpx.Client) -> IndexRanks:
    """The index ranks, once two readings in a row agree (enrichment's last index writes may
    still be landing)."""
    previous = _index_ranks(client)
    for _ in range(20):
        time.sleep(1)
        current = _index_ranks(client)
        if current == previous:
            return current
        previous = current
    raise AssertionError(f"the index ranks never settled: {previous}")


def _found_by_both(ranks: IndexRanks) -> None:
    for query, found in ranks.items():
        assert any(v is not None for v, _, _ in found.values()), f"{query!r}: no vector hit"
        assert any(k is not None for _, k, _ in found.values()), f"{query!r}: no keyword hit"


def _lose_indexes(stack: Stack, *names: str) -> None:
    """Stop retrieval and delete the named embedded index directories (qdrant, tantivy)."""
    assert stack.stop_part("retrieval") == 0, "retrieval did not stop cleanly"
    indexes = stack.config.data_dir / "indexes"
    for name in names:
        directory: Path = indexes / name
        assert directory.is_dir(), f"no index at {directory}"
        shutil.rmtree(directory)


def _serving(client: httpx.Client) -> None:
    """Wait until the restarted retrieval answers searches."""

    def answers() -> tuple[int, int]:
        reply = client.post(
            "/api/memories/search", json={"query": QUERIES[0], "namespace": NAMESPACE}
        )
        return reply.status_code, client.get("/health").status_code

    until(
        answers,
        what="the restarted retrieval answers searches (search and health status 200)",
        seconds=SEARCH_SECONDS,
        interval=0.5,
        retry_on=(httpx.TransportError,),
        accept=lambda codes: codes == (200, 200),
    )


def _repaired(stack: Stack) -> dict[tuple[str, str], float]:
    """exo_reconciler_repaired_total of the running retrieval, by (index, reason)."""
    port = stack.config.metrics_ports["retrieval"]
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    counts: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "exo_reconciler_repaired":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    key = (sample.labels["index"], sample.labels["reason"])
                    counts[key] = sample.value
    return counts


def _take(conn: psycopg.Connection[Any]) -> bool:
    """Take the reconciler's turn (a session advisory lock) if no retrieval holds it."""
    row = conn.execute(
        "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (RECONCILE_TURN,)
    ).fetchone()
    return bool(row and row[0])


def test_retrieval_rebuilds_deleted_indexes_when_it_starts(
    stack: Stack, client: httpx.Client, stored: list[str]
) -> None:
    before = _settled_index_ranks(client)
    _found_by_both(before)

    _lose_indexes(stack, "qdrant", "tantivy")
    started = time.monotonic()
    stack.start_part("retrieval")
    _serving(client)
    # The start-up reconcile writes every memory back into both indexes.
    deadline = time.monotonic() + SEARCH_SECONDS
    while (counts := _repaired(stack)).get(("keyword", "missing"), 0) < len(stored) or counts.get(
        ("vector", "missing"), 0
    ) < len(stored):
        assert time.monotonic() < deadline, f"the start-up reconcile did not rebuild: {counts}"
        time.sleep(0.5)
    rebuilt = time.monotonic() - started
    after = _index_ranks(client)
    print(f"\n{len(stored)} memories rebuilt into both indexes {rebuilt:.1f}s after the restart")
    _assert_same_answers(after, before)


def test_reindex_job_restores_search_after_the_indexes_are_deleted(
    stack: Stack, client: httpx.Client, stored: list[str]
) -> None:
    before = _settled_index_ranks(client)
    _found_by_both(before)

    _lose_indexes(stack, "qdrant", "tantivy")
    database_url = stack.config.database_url
    assert database_url is not None
    with psycopg.connect(database_url, autocommit=True) as turn:
        # The stopped retrieval's connection, and with it its hold on the turn, is gone.
        deadline = time.monotonic() + 30
        while not _take(turn):
            assert time.monotonic() < deadline, "the reconciler's turn was never released"
            time.sleep(0.5)
        stack.start_part("retrieval")
        _serving(client)

        for query in QUERIES:
            lost = [r for r in _search(client, query) if _from_an_index(r)]
            assert lost == [], f"{query!r} still found by an index after it was deleted"

        reply = client.post("/api/maintenance/reindex", json={"wait_seconds": 120})
        assert reply.status_code == 200, reply.text
        report = reply.json()
        repaired = report["repaired"]
        assert repaired.get("keyword/missing", 0) >= len(stored), repaired
        assert repaired.get("vector/missing", 0) >= len(stored), repaired
        print(f"\nreindex of {report['expected']} memories: {report['seconds']:.2f}s, {repaired}")

        _assert_same_answers(_index_ranks(client), before)
        # Nothing left to repair: a second run writes nothing.
        again = client.post("/api/maintenance/reindex", json={"wait_seconds": 120})
        assert again.status_code == 200, again.text
        assert again.json()["repaired"] == {}
