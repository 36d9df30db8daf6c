"""One memory through the whole system: gateway → ingest → Postgres → outbox → JetStream →
projections → hybrid search, on the stack as `exo up` starts it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import pytest

from exocortex.core.runtime.stack import Stack, StackConfig
from exocortex.testing.wait import until_async

pytestmark = pytest.mark.e2e


async def test_store_then_find_by_word_and_by_paraphrase(
    api: httpx.AsyncClient, namespace: str
) -> None:
    created = await api.post(
        "/api/memories",
        json={
            "content": "We chose NATS JetStream for domain events because it is light and durable.",
            "namespace": namespace,
            "tags": ["Architecture", "message_bus"],
            "content_type": "decision",
            "importance": 0.8,
        },
    )
    assert created.status_code == 201, created.text
    memory = created.json()
    assert memory["indexed"] is True
    assert memory["dedup_action"] == "created"
    # Given tags are normalised; auto-tags (decision, nats, ...) come on top.
    assert {"architecture", "message-bus"} <= set(memory["tags"])
    await api.post(
        "/api/memories",
        json={
            "content": "The dashboard uses a dark theme with teal accents.",
            "namespace": namespace,
        },
    )

    by_word = (
        await api.post("/api/memories/search", json={"query": "JetStream", "namespace": namespace})
    ).json()
    assert by_word["results"][0]["memory"]["id"] == memory["id"]
    assert by_word["results"][0]["score_breakdown"]["keyword_rank"] == 1

    paraphrase = (
        await api.post(
            "/api/memories/search",
            json={"query": "which message broker did we pick?", "namespace": namespace},
        )
    ).json()
    assert paraphrase["results"][0]["memory"]["id"] == memory["id"]

    fetched = await api.get(f"/api/memories/{memory['id']}")
    assert fetched.status_code == 200
    assert fetched.json()["content"] == memory["content"]


async def test_namespaces_are_isolated(api: httpx.AsyncClient, namespace: str) -> None:
    await api.post(
        "/api/memories", json={"content": "Zebra migration notes", "namespace": namespace}
    )
    other = await api.post(
        "/api/memories/search", json={"query": "zebra migration", "namespace": f"{namespace}-x"}
    )
    assert other.json()["results"] == []


async def test_twenty_concurrent_identical_stores_make_one_memory(
    api: httpx.AsyncClient, namespace: str
) -> None:
    body = {"content": "Concurrent duplicate content for the race test.", "namespace": namespace}
    replies = await asyncio.gather(*(api.post("/api/memories", json=body) for _ in range(20)))
    assert all(r.status_code == 201 for r in replies)
    ids = {r.json()["id"] for r in replies}
    assert len(ids) == 1
    actions = sorted(r.json()["dedup_action"] for r in replies)
    assert actions.count("created") == 1
    assert actions.count("skipped") == 19


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "<private>only a secret</private>"}, "content"),
        ({"content": 42}, "content"),
        ({"content": "ok", "importance": "high"}, "importance"),
        ({"content": "ok", "importance": 2}, "importance"),
        ({"content": "ok", "tags": "not-a-list"}, "tags"),
        ({"content": "ok", "namespace": "bad namespace!"}, "namespace"),
        ({}, "content"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    api: httpx.AsyncClient, body: dict[str, object], field: str
) -> None:
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 400, reply.text
    problem = reply.json()
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert problem["field"] == field
    assert problem["detail"]


async def test_invalid_json_is_a_400(api: httpx.AsyncClient) -> None:
    reply = await api.post(
        "/api/memories", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 400
    assert reply.json()["detail"] == "Invalid JSON in request body"


async def test_unknown_memory_is_a_404(api: httpx.AsyncClient) -> None:
    reply = await api.get("/api/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV")
    assert reply.status_code == 404


async def test_health_reports_every_dependency(api: httpx.AsyncClient) -> None:
    reply = await api.get("/health")
    assert reply.status_code == 200
    deps = reply.json()["dependencies"]
    assert set(deps) == {
        "postgres",
        "nats",
        "embedding",
        "ingest",
        "retrieval",
        "enrichment",
        "maintenance",
    }
    assert all(state["status"] == "ok" for state in deps.values())
    metrics = await api.get("/metrics")
    assert "exo_http_requests_total" in metrics.text


@pytest.mark.skipif(
    bool(os.environ.get("EXO_TEST_GATEWAY_URL")), reason="restarts an embedded stack of its own"
)
def test_data_survives_a_restart(tmp_path: Path) -> None:
    """A separate stack with its own embedded Postgres and NATS, stopped and started again."""
    config = StackConfig.with_free_ports(tmp_path / "data", postgres_fsync=False)
    with Stack(config) as stack:
        stored = httpx.post(
            f"{stack.gateway_url}/api/memories",
            json={"content": "Persistence check: the kettle is in the left cupboard."},
            timeout=60,
        ).json()
    # Same data directory, fresh ports: only the data has to survive.
    config = StackConfig.with_free_ports(tmp_path / "data", postgres_fsync=False)
    with Stack(config) as stack:
        again = httpx.get(f"{stack.gateway_url}/api/memories/{stored['id']}", timeout=60)
        assert again.status_code == 200
        found = httpx.post(
            f"{stack.gateway_url}/api/memories/search",
            json={"query": "where is the kettle?"},
            timeout=60,
        ).json()
        assert found["results"][0]["memory"]["id"] == stored["id"]


async def test_requests_carry_a_correlation_id_and_are_counted_by_route_template(
    api: httpx.AsyncClient,
) -> None:
    echoed = await api.get(
        "/api/memories/01ARZ3NDEKTSV4RRFFQ69G5FAV", headers={"X-Correlation-Id": "trace-42"}
    )
    assert echoed.status_code == 404
    assert echoed.headers["x-correlation-id"] == "trace-42"
    fresh = await api.get("/health")
    assert len(fresh.headers["x-correlation-id"]) >= 16  # one is made when none is sent

    # A request is counted once its response is sent, so the count can trail the reply
    # by a moment: the metrics are read until it is there.
    async def metrics_text() -> str:
        return (await api.get("/metrics")).text

    # The route template, never the id itself, is the label value.
    text = await until_async(
        metrics_text,
        what="the 404 counted under its route template",
        seconds=30,
        accept=lambda t: 'route="/api/memories/{memory_id}",status="404"' in t,
    )
    assert "01ARZ3NDEKTSV4RRFFQ69G5FAV" not in text
    await api.get("/no/such/route")
    await until_async(
        metrics_text,
        what="the request to no route counted as unmatched",
        seconds=30,
        accept=lambda t: 'route="unmatched"' in t,
    )
