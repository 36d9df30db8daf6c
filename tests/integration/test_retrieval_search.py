"""Hybrid search on the real stack: every signal, filter and mode through REST."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import psycopg
import pytest

from exocortex.testing.rest import search, store, wait_enriched
from exocortex.testing.settings import ApplySettings

Conn = psycopg.AsyncConnection[dict[str, Any]]

ACCESS_COUNT = (
    "SELECT coalesce((SELECT access_count FROM memory_usage WHERE memory_id = %s), 0)"
    " AS access_count"
)


@pytest.fixture
def db(stack_db: Conn) -> Conn:
    return stack_db


def ids(body: Any) -> list[str]:
    return [r["memory"]["id"] if "memory" in r else r["id"] for r in body["results"]]


async def eventually(conn: Conn, sql: str, params: Any, wanted: Any) -> Any:
    """Poll until the query's first value equals `wanted` (side effects are asynchronous)."""
    deadline = asyncio.get_running_loop().time() + 15.0
    value = None
    while asyncio.get_running_loop().time() < deadline:
        row = await (await conn.execute(sql, params)).fetchone()
        value = None if row is None else next(iter(row.values()))
        if value == wanted:
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"{sql!r} stayed {value!r}, wanted {wanted!r}")


async def test_a_single_keyword_hit_ranks_with_its_breakdown(
    api: httpx.AsyncClient, namespace: str
) -> None:
    target = await store(api, namespace, "The vault passphrase rotation uses the zxqvort scheme.")
    await store(api, namespace, "Lunch at the Italian place was good on Friday.")
    body = await search(api, namespace, "zxqvort")
    assert ids(body)[0] == target
    first = body["results"][0]
    assert first["fts_score"] > 0
    assert first["score"] > 0
    breakdown = first["score_breakdown"]
    assert breakdown["keyword_rank"] == 1
    assert 0 < breakdown["recency"] <= 1
    assert breakdown["boost"] >= 1
    # The original API's top-level signal fields, the same values as in the breakdown.
    assert first["recency_score"] == breakdown["recency"]
    assert first["frequency_score"] == breakdown["frequency"]
    assert body["mode"] == "rrf"
    assert body["degraded"] == []


async def test_boost_signals_show_in_the_breakdown(api: httpx.AsyncClient, namespace: str) -> None:
    felt = await store(
        api,
        namespace,
        "The kubernetes cluster upgrade failed badly and cost us a weekend.",
        tags=["kubernetes"],
        valence=-0.8,
        importance=0.9,
    )
    plain = await store(api, namespace, "A kubernetes cluster note without feelings.")
    body = await search(api, namespace, "kubernetes cluster upgrade")
    by_id = {r["memory"]["id"]: r["score_breakdown"] for r in body["results"]}
    assert by_id[felt]["valence"] == 0.8
    assert by_id[felt]["tag"] == 1.0
    assert by_id[plain]["valence"] == 0.0
    # |valence| (and importance slowing decay) make the felt memory's boost larger.
    assert by_id[felt]["boost"] > by_id[plain]["boost"]
    assert ids(body)[0] == felt


async def test_filters_tags_alias_type_source_importance(
    api: httpx.AsyncClient, namespace: str
) -> None:
    tagged = await store(
        api, namespace, "Routing in our web app uses the app router.", tags=["nextjs"]
    )
    decision = await store(
        api,
        namespace,
        "Routing decision: we keep server components for every page.",
        content_type="decision",
        source="cli",
        importance=0.9,
    )
    by_alias = await search(api, namespace, "routing", tags=["next-js"])
    assert ids(by_alias) == [tagged]
    assert (await search(api, namespace, "routing", content_type="decision"))["count"] == 1
    assert ids(await search(api, namespace, "routing", source="cli")) == [decision]
    assert ids(await search(api, namespace, "routing", min_importance=0.8)) == [decision]


async def test_a_date_means_the_whole_day_in_the_callers_zone(
    api: httpx.AsyncClient, namespace: str
) -> None:
    memory_id = await store(api, namespace, "Sprint planning notes about the billing rewrite.")
    created = datetime.fromisoformat(
        (await api.get(f"/api/memories/{memory_id}")).json()["created_at"]
    )
    for zone in ("UTC", "Pacific/Kiritimati", "America/Los_Angeles"):
        local_day = created.astimezone(ZoneInfo(zone)).date()
        same_day = await search(
            api,
            namespace,
            "billing rewrite",
            after=local_day.isoformat(),
            before=local_day.isoformat(),
            timezone=zone,
        )
        assert ids(same_day) == [memory_id], zone
        next_day = (local_day + timedelta(days=1)).isoformat()
        later = await search(api, namespace, "billing rewrite", after=next_day, timezone=zone)
        assert later["results"] == [], zone
    with_offset = await search(
        api,
        namespace,
        "billing rewrite",
        before=(created - timedelta(seconds=1)).isoformat(),
    )
    assert with_offset["results"] == []


async def test_bad_dates_and_zones_are_400_naming_the_field(
    api: httpx.AsyncClient, namespace: str
) -> None:
    for body, field in (
        ({"after": "last tuesday"}, "after"),
        ({"before": "2026-13-45"}, "before"),
        ({"after": "2026-01-01", "timezone": "Mars/Olympus"}, "timezone"),
        ({"max_tokens": 5}, "max_tokens"),
    ):
        reply = await api.post(
            "/api/memories/search", json={"query": "x", "namespace": namespace, **body}
        )
        assert reply.status_code in (400, 422), reply.text
        assert field in reply.text


async def test_metadata_is_penalised_unless_asked_for(
    api: httpx.AsyncClient, namespace: str
) -> None:
    meta = await store(
        api, namespace, "Benchmark run of the ranking pipeline finished.", is_metadata=True
    )
    body = await search(api, namespace, "ranking pipeline benchmark run")
    result = next(r for r in body["results"] if r["memory"]["id"] == meta)
    assert result["score_breakdown"]["metadata_penalty"] == 0.35
    asked = await search(api, namespace, "ranking pipeline benchmark run", include_metadata=True)
    result = next(r for r in asked["results"] if r["memory"]["id"] == meta)
    assert result["score_breakdown"]["metadata_penalty"] == 1.0
    assert result["score"] > body["results"][0]["score"] or ids(body)[0] != meta


async def test_compact_mode_and_token_packing(api: httpx.AsyncClient, namespace: str) -> None:
    topics = [
        "Invoices are exported to the accounting system every evening",
        "The mobile app caches profile pictures for a week",
        "Our office plants get watered on Tuesdays by whoever arrives first",
        "Translations for the Portuguese locale are reviewed by a freelancer",
        "The data warehouse keeps raw events for thirteen months",
    ]
    for i, topic in enumerate(topics):
        # Different enough that deduplication keeps all five; long enough to cost tokens.
        await store(
            api,
            namespace,
            f"{topic}. The canary must stay green for an hour. " + f"{topic} (note {i}). " * 8,
        )
    compact = await search(api, namespace, "canary green", compact=True)
    assert compact["count"] == 5
    first = compact["results"][0]
    assert set(first) == {"id", "preview", "score", "tags", "created_at"}
    assert first["preview"] == "The canary must stay green for an hour."
    packed = await search(api, namespace, "canary green deployment", max_tokens=500)
    assert 1 <= packed["count"] < 5
    used = sum(len(r["memory"]["content"]) // 4 + 20 for r in packed["results"])
    assert used <= 500 + 20
    tiny = await search(api, namespace, "canary green deployment", max_tokens=100)
    assert tiny["count"] == 1  # the first result always fits


async def test_linked_context_graph_proximity_and_context_graph(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    seed = await store(api, namespace, "The payment gateway retries failed charges three times.")
    neighbour = await store(api, namespace, "Stripe webhooks arrive out of order sometimes.")
    other = await store(api, namespace, "Charges in euros are rounded half to even.")
    await db.execute(
        "INSERT INTO memory_links (source_id, target_id, link_type, strength) VALUES "
        "(%s, %s, 'elaborates', 0.9), (%s, %s, 'related', 0.6)",
        (seed, neighbour, other, seed),
    )
    body = await search(api, namespace, "payment gateway retries", limit=1, include_linked=True)
    assert ids(body) == [seed]
    linked = {x["memory"]["id"]: x for x in body["linked"]}
    assert set(linked) == {neighbour, other}
    assert linked[neighbour]["link_type"] == "elaborates"
    assert linked[neighbour]["linked_from"] == seed
    assert linked[neighbour]["score"] == 0.9

    # A candidate linked to a top seed gets graph proximity 0.3 + 0.5 · strength.
    charges = await search(api, namespace, "failed charges")
    by_id = {r["memory"]["id"]: r["score_breakdown"] for r in charges["results"]}
    assert by_id[other]["graph"] > 0
    assert by_id[other]["graph_rank"] is not None

    graph = await api.post(
        "/api/memories/context-graph",
        json={"query": "payment gateway retries", "namespace": namespace, "limit": 1},
    )
    assert graph.status_code == 200, graph.text
    g = graph.json()
    assert g["linked_count"] == 2
    assert g["results"][0]["memory"]["id"] == seed
    assert {r.get("linked_from") for r in g["results"][1:]} == {seed}


async def test_legacy_weighted_mode(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    target = await store(api, namespace, "Quarterly OKR review happens in the first week.")
    await change_settings({"scoring.use_rrf": "false"})
    body = await search(api, namespace, "quarterly OKR review")
    assert body["mode"] == "legacy"
    assert ids(body)[0] == target
    # Weighted average: vector + keyword + recency, so well above the legacy threshold.
    assert body["results"][0]["score"] >= 0.15


async def test_a_search_naming_no_namespace_spans_every_namespace(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    other = f"{namespace}-elsewhere"
    here = await store(api, namespace, "The quokkaflux relay was retired in the spring cleanup.")
    there = await store(api, other, "The quokkaflux relay still feeds the legacy dashboard.")

    async def everywhere(path: str, **body: Any) -> list[str]:
        reply = await api.post(path, json={"query": "quokkaflux relay", "limit": 20, **body})
        assert reply.status_code == 200, reply.text
        return ids(reply.json())

    found = await everywhere("/api/memories/search")
    assert {here, there} <= set(found)
    assert set(await everywhere("/api/memories/search", compact=True)) >= {here, there}
    assert {here, there} <= set(await everywhere("/api/memories/context-graph"))
    # Naming a namespace keeps to it.
    named = await everywhere("/api/memories/search", namespace=other)
    assert there in named
    assert here not in named

    # A miss over every namespace is logged without one.
    miss = f"quokkaflux {namespace}"
    reply = await api.post(
        "/api/memories/search", json={"query": miss, "tags": ["no-such-tag"], "compact": True}
    )
    assert reply.json()["count"] == 0
    await eventually(
        db,
        "SELECT count(*) FROM search_misses WHERE namespace IS NULL AND query = %s",
        (miss,),
        1,
    )


async def test_search_side_effects_are_recorded_off_the_hot_path(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    a = await store(api, namespace, "Backups run nightly at two in the morning.")
    b = await store(api, namespace, "Backups are kept for thirty days.")
    await search(api, namespace, "backups nightly")
    for memory_id in (a, b):
        await eventually(db, ACCESS_COUNT, (memory_id,), 1)
    await eventually(
        db,
        "SELECT count(*) FROM co_retrievals WHERE namespace = %s AND %s = ANY(memory_ids)",
        (namespace, a),
        1,
    )
    # Compact searches only peek: no access counted.
    await search(api, namespace, "backups nightly", compact=True)
    # Dense search always finds a nearest neighbour; a filter that matches nothing misses.
    await search(api, namespace, "backups weekly", compact=True, tags=["no-such-tag"])
    await eventually(
        db,
        "SELECT count(*) FROM search_misses WHERE namespace = %s AND query = %s",
        (namespace, "backups weekly"),
        1,
    )
    row = await (await db.execute(ACCESS_COUNT, (a,))).fetchone()
    assert row == {"access_count": 1}
    logged = await (
        await db.execute("SELECT count(*) AS n FROM access_log WHERE memory_id = %s", (a,))
    ).fetchone()
    assert logged == {"n": 1}


async def test_implicit_usefulness_counts_once_and_feedback_adds(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    served = await store(api, namespace, "The on-call rotation changes every Monday.")
    never_served = await store(api, namespace, "Unrelated grocery list: eggs, flour.")
    await search(api, namespace, "on-call rotation", limit=1)
    await eventually(
        db,
        "SELECT count(*) FROM search_impressions WHERE memory_id = %s",
        (served,),
        1,
    )
    first = await api.get(f"/api/memories/{served}")
    assert first.json()["useful_count"] == 1
    again = await api.get(f"/api/memories/{served}")
    assert again.json()["useful_count"] == 1  # once per impression
    assert (await api.get(f"/api/memories/{never_served}")).json()["useful_count"] == 0

    # An impression older than five minutes does not count.
    await search(api, namespace, "on-call rotation", limit=1)
    await eventually(
        db, "SELECT count(*) FROM search_impressions WHERE memory_id = %s", (served,), 1
    )
    await db.execute(
        "UPDATE search_impressions SET served_at = now() - interval '6 minutes' "
        "WHERE memory_id = %s",
        (served,),
    )
    assert (await api.get(f"/api/memories/{served}")).json()["useful_count"] == 1

    feedback = await api.post(
        "/api/memories/feedback", json={"ids": [served, never_served, "01NOPE"]}
    )
    assert feedback.status_code == 200, feedback.text
    assert feedback.json()["missing_ids"] == ["01NOPE"]
    assert (await api.get(f"/api/memories/{never_served}")).json()["useful_count"] == 1
    assert (await api.get(f"/api/memories/{served}")).json()["useful_count"] == 2
    empty = await api.post("/api/memories/feedback", json={"ids": []})
    assert empty.status_code in (400, 422)


async def test_usefulness_signal_reaches_the_ranking(
    api: httpx.AsyncClient, namespace: str
) -> None:
    useful = await store(api, namespace, "Rollback procedure: redeploy the previous image tag.")
    before = (await search(api, namespace, "rollback procedure"))["results"][0]
    assert before["score_breakdown"]["usefulness"] == 0
    await api.post("/api/memories/feedback", json={"ids": [useful]})
    after = (await search(api, namespace, "rollback procedure"))["results"][0]
    assert after["score_breakdown"]["usefulness"] > 0
    assert after["score"] > before["score"]


async def test_query_expansion_finds_an_entity_by_its_alias(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    entity = await api.post(
        "/api/entities",
        json={"name": "Kubernetes", "aliases": ["k8s"], "namespace": namespace},
    )
    assert entity.status_code == 201, entity.text
    target = await store(api, namespace, "Every service runs on Kubernetes since the spring.")
    await store(api, namespace, "The office plants are watered on Fridays.")

    body = await search(api, namespace, "k8s rollout")
    assert "Kubernetes" in body["expansion_terms"]
    hit = next(r for r in body["results"] if r["memory"]["id"] == target)
    assert hit["score_breakdown"]["keyword_rank"] is not None  # matched through the expansion

    await change_settings({"search.query_expansion": "false"})
    body = await search(api, namespace, "k8s rollout")
    assert body["expansion_terms"] == []
    for r in body["results"]:
        if r["memory"]["id"] == target:
            assert r["score_breakdown"]["keyword_rank"] is None


async def test_expanded_query_reaches_both_indexes(api: httpx.AsyncClient, namespace: str) -> None:
    target = await store(api, namespace, "Invoices are exported to the accounting system nightly.")
    plain = await search(api, namespace, "zqxw")
    assert all(r["score_breakdown"]["keyword_rank"] is None for r in plain["results"])
    body = await search(api, namespace, "zqxw", expanded_query="invoices accounting export")
    hit = next(r for r in body["results"] if r["memory"]["id"] == target)
    assert hit["score_breakdown"]["keyword_rank"] == 1
    assert hit["score_breakdown"]["vector_rank"] == 1
    too_long = await api.post(
        "/api/memories/search",
        json={"query": "x", "namespace": namespace, "expanded_query": "y" * 4001},
    )
    assert too_long.status_code in (400, 422)
    assert "expanded_query" in too_long.text


async def test_the_search_reply_matches_its_documented_model(
    api: httpx.AsyncClient, namespace: str
) -> None:
    from exocortex.gateway.routers.search import SearchResponse

    target = await store(
        api, namespace, "The search reply is written straight to JSON on the hot path."
    )
    await wait_enriched(api, target)  # its version and status must not move between reads
    for extra in ({}, {"compact": True}, {"include_linked": True}):
        body = await search(api, namespace, "search reply JSON", **extra)
        assert body["count"] >= 1
        SearchResponse.model_validate(body, strict=False)
    # Values read exactly as on every other route (timestamps above all).
    got = (await api.get(f"/api/memories/{target}")).json()
    found = next(r["memory"] for r in body["results"] if r["memory"]["id"] == target)
    assert found["created_at"] == got["created_at"]
    moving = {"access_count", "useful_count", "last_accessed_at"}  # the GET itself counts
    assert {k: v for k, v in found.items() if k not in moving} == {
        k: got[k] for k in found if k not in moving
    }
