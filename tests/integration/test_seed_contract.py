"""Acceptance items of the original's contract over REST, on the real stack: settings that switch
behaviour off do switch it off, the extractor finds what the original's found, and search scores
quality and goal relevance and shows both."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from exocortex.testing.rest import search, store, stored, wait_enriched


@pytest.fixture
async def no_auto_tags(api: httpx.AsyncClient) -> AsyncIterator[None]:
    """Auto-tagging switched off, with no wait: the write path applies a settings change from
    the next store on."""
    before = (await api.get("/api/settings")).json()["auto_tagging.enabled"]
    # A store just before, so the write path holds the old settings when they change.
    await stored(api, content="Warm-up note about Python builds.", namespace="t-warm-up")
    reply = await api.patch("/api/settings", json={"auto_tagging.enabled": "false"})
    assert reply.status_code == 200, reply.text
    try:
        yield
    finally:
        await api.patch("/api/settings", json={"auto_tagging.enabled": str(before)})


CONTENT = "Fixed a Python bug in the deploy script: the Docker build cached a stale config."


async def test_auto_tagging_off_adds_no_tags(
    api: httpx.AsyncClient, namespace: str, no_auto_tags: None
) -> None:
    reply = await stored(api, content=CONTENT, namespace=namespace, tags=["ops"])
    assert reply["tags"] == ["ops"]
    # Nor later, once enrichment has read it.
    assert (await wait_enriched(api, reply["id"]))["tags"] == ["ops"]


async def test_auto_tagging_on_adds_tags(api: httpx.AsyncClient, namespace: str) -> None:
    """The other side of the switch, so the test above cannot pass by tagging nothing ever."""
    reply = await stored(api, content=CONTENT, namespace=namespace, tags=["ops"])
    assert set(reply["tags"]) > {"ops"}


async def _entity_names(api: httpx.AsyncClient, namespace: str, memory_id: str) -> dict[str, str]:
    await wait_enriched(api, memory_id)
    reply = await api.get("/api/entities", params={"namespace": namespace})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    entities: list[dict[str, Any]] = body.get("results", body.get("entities", []))
    out = {}
    for entity in entities:
        linked = await api.get(f"/api/entities/{entity['id']}/memories")
        assert linked.status_code == 200, linked.text
        ids = {m["memory"]["id"] if "memory" in m else m["id"] for m in _listed(linked.json())}
        if memory_id in ids:
            out[entity["name"]] = entity["type"]
    return out


def _listed(body: Any) -> list[dict[str, Any]]:
    if isinstance(body, list):
        return body
    for key in ("results", "memories"):
        if isinstance(body.get(key), list):
            return list(body[key])
    return []


async def test_fastify_postgres_and_django_become_linked_entities(
    api: httpx.AsyncClient, namespace: str
) -> None:
    api_memory = await store(
        api, namespace, "The public API moved to Fastify, with PostgreSQL for the orders."
    )
    admin = await store(api, namespace, "The back office is a Django app on the same database.")
    assert await _entity_names(api, namespace, api_memory) == {
        "Fastify": "technology",
        "PostgreSQL": "technology",
    }
    assert (await _entity_names(api, namespace, admin)).get("Django") == "technology"


async def test_quality_and_goal_relevance_are_scored_and_shown(
    api: httpx.AsyncClient, namespace: str
) -> None:
    goal = await api.post(
        "/api/goals", json={"title": "Launch the billing portal", "namespace": namespace}
    )
    assert goal.status_code == 201, goal.text
    logged = await api.post(
        f"/api/goals/{goal.json()['id']}/progress",
        json={"content": "Billing portal: invoices page renders from the ledger API."},
    )
    assert logged.status_code == 201, logged.text
    progress = logged.json()["memory"]["id"]
    weighty = await store(
        api, namespace, "Billing portal invoices must show VAT per line.", importance=0.9
    )
    slight = await store(
        api, namespace, "Billing portal invoices once had a blue header.", importance=0.1
    )

    started = time.monotonic()
    body = await search(api, namespace, "billing portal invoices", limit=10)
    assert time.monotonic() - started < 30
    results = {r["memory"]["id"]: r["score_breakdown"] for r in body["results"]}
    assert results[progress]["goal_relevance"] == 1.0
    assert results[weighty]["goal_relevance"] == 0.0
    # 0.30 × importance is the largest part of quality: the weightier memory scores higher.
    assert 0 < results[slight]["quality"] < results[weighty]["quality"] <= 1
    expected = 1 + sum(
        results[weighty][signal] * weight
        for signal, weight in (
            ("recency", 0.20),
            ("frequency", 0.10),
            ("usefulness", 0.05),
            ("valence", 0.05),
            ("quality", 0.10),
            ("goal_relevance", 0.10),
        )
    )
    assert results[weighty]["boost"] == pytest.approx(expected)


async def test_a_session_digest_stores_each_fact_as_a_memory(
    api: httpx.AsyncClient, namespace: str
) -> None:
    fact = "We decided to keep Redis instead of Memcached for the session cache."
    event = {
        "type": "assistant",
        "message": {
            "content": [
                {"type": "text", "text": f"Looked at both caches. {fact}"},
                {"type": "tool_use", "name": "Edit", "input": {"file_path": "/src/shop/cache.py"}},
            ]
        },
    }
    reply = await api.post(
        "/api/memories/digest-session",
        json={"transcript": json.dumps(event), "namespace": namespace, "project": "shop"},
    )
    assert reply.status_code == 201, reply.text
    listed = await api.get(
        "/api/memories/recent", params={"namespace": namespace, "tags": "session-fact"}
    )
    assert listed.status_code == 200, listed.text
    facts = _listed(listed.json())
    assert [(m["content"], m["content_type"], m["importance"]) for m in facts] == [
        (fact, "text", 0.6)
    ]
    assert {"session-fact", "decision", "shop"} <= set(facts[0]["tags"])
