"""The analytics routes over a namespace whose rows are written directly, so every expected
number is known; misses and gaps come from real searches through the stack."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.core.ids import new_id
from exocortex.testing.keyed import Keyed, keyed

__all__ = ["keyed"]

Db = psycopg.AsyncConnection[dict[str, Any]]
NOW = datetime.now(UTC)

# (id suffix, importance, useful, accesses, age in days, tags, model_id, agent)
ROWS: list[tuple[str, float, int, int, int, list[str], str | None, str | None]] = [
    ("a", 0.9, 5, 30, 1, ["deploy", "infra"], "gpt-x", "alice"),
    ("b", 0.5, 2, 3, 2, ["deploy", "infra"], "gpt-x", "alice"),
    ("c", 0.5, 0, 0, 3, ["deploy"], "gpt-x", "bob"),
    ("d", 0.4, 0, 0, 200, ["deploys", "old"], "claude-y", "bob"),
    ("e", 0.4, 0, 0, 220, ["deploys", "old"], "claude-y", "bob"),
    ("f", 1.0, 0, 0, 400, ["old"], "claude-y", None),
    ("g", 0.2, 1, 150, 40, [], None, None),
]


async def _seed(db: Db, ns: str) -> dict[str, str]:
    ids = {}
    for suffix, importance, useful, accesses, age, tags, model, agent in ROWS:
        mid = new_id()  # ids as the store makes them (a restore of the whole store checks them)
        ids[suffix] = mid
        created = NOW - timedelta(days=age)
        await db.execute(
            "INSERT INTO memories (id, namespace, content, importance, useful_count, model_id,"
            " agent, created_at, updated_at, embedding, embedding_model, embedding_dim)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, 384)",
            (
                mid,
                ns,
                f"memory {suffix} " * 20,
                importance,
                useful,
                model,
                agent,
                created,
                created,
                b"\0" * 1536 if suffix != "g" else None,
                "old-model" if suffix == "b" else "current-model",
            ),
        )
        for tag in tags:
            await db.execute("INSERT INTO memory_tags VALUES (%s, %s)", (mid, tag))
        if accesses:
            await db.execute(
                "INSERT INTO memory_usage (memory_id, access_count) VALUES (%s, %s)",
                (mid, accesses),
            )
    # An archived memory and a chunk are not memories for analytics.
    await db.execute(
        "INSERT INTO memories (id, namespace, content, is_active) VALUES (%s, %s, 'gone', false)",
        (new_id(), ns),
    )
    await db.execute(
        "INSERT INTO memories (id, namespace, content, parent_id, chunk_index)"
        " VALUES (%s, %s, 'chunk', %s, 0)",
        (new_id(), ns, ids["a"]),
    )
    return ids


async def _get(api: httpx.AsyncClient, path: str, **params: Any) -> Any:
    reply = await api.get(f"/api/analytics/{path}", params=params)
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_usage_reports_count_active_root_memories(
    api: httpx.AsyncClient, stack_db: Db, namespace: str
) -> None:
    await _seed(stack_db, namespace)
    summary = await _get(api, "summary", namespace=namespace)
    assert summary["totalActive"] == 7
    assert summary["neverAccessedPct"] == pytest.approx(100 * 4 / 7)
    assert summary["usefulPct"] == pytest.approx(100 * 3 / 7)
    assert summary["medianAccessCount"] == 0

    buckets = await _get(api, "access-distribution", namespace=namespace)
    assert buckets == [
        {"label": "0", "count": 4},
        {"label": "1-5", "count": 1},
        {"label": "6-20", "count": 0},
        {"label": "21-100", "count": 1},
        {"label": "100+", "count": 1},
    ]

    tags = await _get(api, "tag-effectiveness", namespace=namespace)
    # Only tags on at least three memories; most useful first.
    assert [(t["tag"], t["memoryCount"]) for t in tags] == [("deploy", 3), ("old", 3)]
    assert tags[0]["avgUsefulCount"] == pytest.approx(7 / 3)

    producers = await _get(api, "producer-quality", namespace=namespace)
    assert [(p["producer"], p["memoryCount"]) for p in producers] == [
        ("gpt-x", 3),
        ("claude-y", 3),
    ]
    agents = await _get(api, "producer-quality", namespace=namespace, by="agent")
    assert [a["producer"] for a in agents] == ["bob"]  # alice has only two


async def test_quality_embedding_and_decay_reports(
    api: httpx.AsyncClient, stack_db: Db, namespace: str
) -> None:
    ids = await _seed(stack_db, namespace)
    trend = await _get(api, "quality-trend", namespace=namespace, granularity="month", limit=24)
    assert sum(p["created"] for p in trend) == 7
    assert [p["period"] for p in trend] == sorted(p["period"] for p in trend)
    latest = trend[-1]
    assert latest["period"] == NOW.strftime("%Y-%m") or latest["created"] >= 1

    quality = await _get(api, "quality-distribution", namespace=namespace)
    assert quality["total"] == 7
    assert quality["p10"] <= quality["median"] <= quality["p90"]
    assert quality["highQuality"] >= 1  # memory a: important, useful, accessed, new

    health = await _get(api, "embedding-health", namespace=namespace)
    # The chunk has no embedding either: every active row searched by vector is counted.
    assert health["missingEmbedding"] == 2
    assert health["totalEmbedded"] == 6
    assert health["models"] == {"current-model": 5, "old-model": 1}
    # The running model's fingerprint is neither test label: every stored one mismatches.
    assert health["currentModel"] not in (None, "current-model")
    assert health["mismatchedModel"] == 6

    decay = await _get(api, "decay-preview", namespace=namespace)
    # d and e: never accessed, old, importance above 0.3, low quality; f is pinned (1.0).
    assert {c["id"] for c in decay["candidates"]} == {ids["d"], ids["e"]}
    assert decay["total"] == 2
    assert all(len(c["content"]) <= 120 for c in decay["candidates"])


async def test_tag_health_suggests_merging_near_spellings(
    api: httpx.AsyncClient, stack_db: Db, namespace: str
) -> None:
    await _seed(stack_db, namespace)
    health = await _get(api, "tag-health", namespace=namespace)
    assert health["totalTags"] == 4
    assert health["aliasMap"]["nextjs"] == "next.js"
    pairs = {(s["fromTag"], s["toTag"]) for s in health["suggestions"]}
    assert ("deploys", "deploy") in pairs
    assert health["mergeCount"] == len(pairs)


async def _misses(api: httpx.AsyncClient, namespace: str, want: int) -> list[dict[str, Any]]:
    # The recorder writes misses a couple of seconds after the searches.
    for _ in range(60):
        misses: list[dict[str, Any]] = await _get(api, "search-misses", namespace=namespace)
        if sum(m["count"] for m in misses) >= want:
            return misses
        await asyncio.sleep(0.5)
    raise AssertionError(f"misses not recorded: {misses}")


async def test_a_repeated_miss_in_an_empty_namespace_is_one_query_counted_twice(
    api: httpx.AsyncClient, namespace: str
) -> None:
    for query in ("Kubernetes ingress setup", "kubernetes  ingress SETUP", "kubernetes pods"):
        reply = await api.post(
            "/api/memories/search", json={"query": query, "namespace": namespace}
        )
        assert reply.status_code == 200
        assert reply.json()["results"] == []
    misses = await _misses(api, namespace, 3)
    assert [(m["query"], m["count"]) for m in misses] == [
        ("kubernetes ingress setup", 2),
        ("kubernetes pods", 1),
    ]
    gaps = await _get(api, "knowledge-gaps", namespace=namespace, min_count=3)
    assert len(gaps) == 1
    assert gaps[0]["topic"] == "kubernetes"
    assert gaps[0]["count"] == 3
    assert gaps[0]["severity"] == "info"
    assert gaps[0]["queries"] == ["kubernetes ingress setup", "kubernetes pods"]
    assert await _get(api, "knowledge-gaps", namespace=namespace, min_count=4) == []


async def test_bad_parameters_are_400_naming_the_field(api: httpx.AsyncClient) -> None:
    for path, params, field in (
        ("search-misses", {"days": 91}, "days"),
        ("producer-quality", {"by": "vendor"}, "by"),
        ("quality-trend", {"granularity": "day"}, "granularity"),
        ("tag-effectiveness", {"limit": 0}, "limit"),
    ):
        reply = await api.get(f"/api/analytics/{path}", params=params)
        assert reply.status_code == 400, (path, reply.text)
        assert field in reply.text


async def test_a_scoped_key_sees_only_its_namespaces(keyed: Keyed, stack_db: Db) -> None:
    await _seed(stack_db, keyed.a)
    await _seed(stack_db, keyed.b)
    await stack_db.execute(
        "INSERT INTO search_misses (namespace, query, result_count) VALUES (%s, 'secret b', 0)",
        (keyed.b,),
    )
    mine = (await keyed.ro.get("/api/analytics/summary")).json()
    assert mine["totalActive"] == 7
    both = (await keyed.admin.get("/api/analytics/summary", params={"namespace": keyed.b})).json()
    assert both["totalActive"] == 7
    refused = await keyed.ro.get("/api/analytics/summary", params={"namespace": keyed.b})
    assert refused.status_code == 403
    misses = (await keyed.ro.get("/api/analytics/search-misses")).json()
    assert "secret b" not in {m["query"] for m in misses}
