"""Search reads only the rows that can reach the page: the page must not depend on that."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.testing.rest import search
from exocortex.testing.settings import ApplySettings

# Every memory is a candidate of every search (each index returns at least 50), so a page of
# 10 and a page of 50 rank the same candidates; only the rows read differ.
CORPUS = 50
Conn = psycopg.AsyncConnection[dict[str, Any]]
SUBJECTS = ["deploy", "database", "billing", "search", "queue", "cache", "login", "backup"]
VERBS = ["failed after", "was slow during", "was fixed by", "needs review for", "moved before"]
OBJECTS = ["the migration", "the release", "the outage", "the audit", "the rollout"]
# Every note names the database migration, so every memory is found by both indexes and the
# fused scores fall off smoothly, as in a large namespace on one subject.
# The last query has more words than search looks up tags for (it then assumes every unread
# candidate may carry a matching tag).
LONG = "database migration outage " + " ".join(f"detail{i}" for i in range(40))
QUERIES = ("database migration outage", "database migration rollout", "migration audit", LONG)
TAG = "migration-log"
OLD = "UPDATE memories SET created_at = now() - interval '400 days', useful_count = 0"


async def test_a_short_page_is_the_head_of_a_long_one(
    api: httpx.AsyncClient, namespace: str, stack_db: Conn, change_settings: ApplySettings
) -> None:
    rng = random.Random(11)
    memories = [
        {
            "content": f"Note {i}: the database migration {rng.choice(VERBS)} "
            f"{rng.choice(OBJECTS)} of the {rng.choice(SUBJECTS)} service in week {i % 9}.",
            "namespace": namespace,
            "importance": round(rng.random(), 2),
            # A tag that matches the query's words earns the tag bonus on top of the bound.
            "tags": [rng.choice(SUBJECTS)] if rng.random() < 0.3 else [],
        }
        for i in range(CORPUS)
    ]
    reply = await api.post("/api/memories/import", json={"memories": memories})
    assert reply.status_code == 200, reply.text
    assert reply.json()["imported"] == CORPUS
    assert reply.json()["indexed"] is True
    # Old and equally used: every boost is the same small one until a test raises some.
    await stack_db.execute(f"{OLD} WHERE namespace = %s", (namespace,))
    await _set_access(stack_db, "namespace = %s", (namespace,), 30)
    await _settled(api, stack_db, namespace)

    # Pages that need fewer results read fewer rows after the first ones. They must agree.
    for query in QUERIES:
        # Compact searches leave access counts alone, so every search sees the same signals.
        ten = (await search(api, namespace, query, limit=10, compact=True))["results"]
        assert len(ten) == 10
        for limit, offset in ((1, 0), (5, 0), (5, 5), (3, 7)):
            page = await search(api, namespace, query, limit=limit, offset=offset, compact=True)
            assert _ranked(page["results"]) == _ranked(ten[offset : offset + limit]), query

    # Against reading every row (a page of 50 reads all 50 candidates). Graph proximity and
    # arrival neighbours are off, so the fused order is the indexes' alone. Recency weighs
    # more than by default: with the default weights a memory from rank 20 on only just
    # reaches the top 10 (rrf_k 5 makes fused scores fall steeply), so whether any of them
    # won turned on small differences between runs. A larger weight also makes the bound
    # looser, so more unread rows must be considered: the property under test is the same.
    off = {
        "scoring.graph_weight": "0",
        "scoring.neighbour_weight": "0",
        "scoring.recency_weight": "1.0",
    }
    await change_settings(off)
    for query in QUERIES:
        found = await search(api, namespace, query, limit=CORPUS, compact=True)
        order = [r["id"] for r in found["results"]]
        # Make memories from past the first rows read new, used, useful and tagged with a
        # query word: boost and tag bonus carry them onto the page, but only if search
        # reads their rows.
        deep = order[20:35]
        await _set_access(stack_db, "namespace = %s", (namespace,), 0)
        await stack_db.execute(
            "UPDATE memories SET created_at = now(), useful_count = 9 WHERE id = ANY(%s)",
            (deep,),
        )
        await _set_access(stack_db, "id = ANY(%s)", (deep,), 30)
        await stack_db.execute(
            "INSERT INTO memory_tags (memory_id, tag) SELECT unnest(%s::text[]), %s",
            (deep, TAG),
        )
        everything = (await search(api, namespace, query, limit=CORPUS, compact=True))["results"]
        assert {r["id"] for r in everything[:10]} & set(deep), "no deep memory won"
        for limit in (1, 10):
            page = await search(api, namespace, query, limit=limit, compact=True)
            assert _ranked(page["results"]) == _ranked(everything[:limit]), query
        await stack_db.execute(f"{OLD} WHERE namespace = %s", (namespace,))
        await _set_access(stack_db, "namespace = %s", (namespace,), 30)
        await stack_db.execute("DELETE FROM memory_tags WHERE tag = %s", (TAG,))


async def _set_access(db: Conn, where: str, params: tuple[object, ...], count: int) -> None:
    await db.execute(
        "INSERT INTO memory_usage (memory_id, access_count) "
        f"SELECT id, %s FROM memories WHERE {where} "
        "ON CONFLICT (memory_id) DO UPDATE SET access_count = EXCLUDED.access_count",
        (count, *params),
    )


async def _settled(api: httpx.AsyncClient, db: Conn, namespace: str) -> None:
    """Enrichment (entities, links, keywords) changes rankings while it runs: wait for it to
    finish and for the rankings to hold still."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 90.0
    last: list[Any] = []
    while loop.time() < deadline:
        row = await (
            await db.execute(
                "SELECT count(*) AS n FROM memories WHERE namespace = %s"
                " AND enrichment_status = 'pending'",
                (namespace,),
            )
        ).fetchone()
        now = [
            _ranked((await search(api, namespace, q, limit=CORPUS, compact=True))["results"])
            for q in QUERIES
        ]
        if row is not None and row["n"] == 0 and now == last:
            return
        last = now
        await asyncio.sleep(1.0)
    raise AssertionError("rankings did not settle after enrichment")


def _ranked(results: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    # Recency moves a little between two searches (about 1e-6 of a score per second apart on
    # this store, and a loaded machine puts seconds between them); nothing else may, and any
    # other difference in a score is far larger than this.
    return [(r["id"], pytest.approx(r["score"], rel=1e-4)) for r in results]
