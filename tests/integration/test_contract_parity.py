"""Details of the original API that its clients rely on, on the real stack: fields it answers
with, bodies it does without and values it accepts."""

from __future__ import annotations

from typing import Any

import httpx

from exocortex.testing.keyed import Keyed
from exocortex.testing.wait import until_async


async def test_knowledge_gaps_keep_the_originals_query_field(
    api: httpx.AsyncClient, namespace: str
) -> None:
    for query in ("terraform state locking", "Terraform  STATE locking", "terraform modules"):
        reply = await api.post(
            "/api/memories/search", json={"query": query, "namespace": namespace}
        )
        assert reply.status_code == 200, reply.text

    async def gaps() -> list[dict[str, Any]]:
        reply = await api.get(
            "/api/analytics/knowledge-gaps", params={"namespace": namespace, "min_count": 3}
        )
        assert reply.status_code == 200, reply.text
        rows: list[dict[str, Any]] = reply.json()
        return rows

    rows = await until_async(gaps, what="the three misses formed one knowledge gap")
    assert len(rows) == 1
    gap = rows[0]
    # The original's field, the most asked query, beside this product's topic grouping.
    assert gap["query"] == "terraform state locking"
    assert gap["topic"] == "terraform"
    assert gap["queries"] == ["terraform state locking", "terraform modules"]
    assert gap["count"] == 3


async def test_contradiction_detection_takes_no_body(keyed: Keyed) -> None:
    # A key scoped to one namespace, so the run (every default: all the namespaces the caller
    # may see) stays inside this test's namespace on the shared stack.
    for reply in (
        await keyed.rw.post("/api/contradictions/detect"),
        await keyed.rw.post(
            "/api/contradictions/detect", content=b"", headers={"content-type": "application/json"}
        ),
    ):
        assert reply.status_code in (200, 202), reply.text
        assert reply.json()["run_id"], reply.text
        assert reply.json()["dry_run"] is False
    # A body is still checked: unknown fields are refused.
    bad = await keyed.rw.post("/api/contradictions/detect", json={"bogus": 1})
    assert bad.status_code == 400, bad.text


async def test_archive_takes_stale_days_zero(api: httpx.AsyncClient, namespace: str) -> None:
    stored = await api.post(
        "/api/memories",
        json={"content": "A throwaway scratch note.", "namespace": namespace, "importance": 0.1},
    )
    assert stored.status_code == 201, stored.text
    kept = await api.post(
        "/api/memories",
        json={"content": "An important design rule.", "namespace": namespace, "importance": 0.9},
    )
    assert kept.status_code == 201, kept.text
    # 0 days: "not touched since now", so the unimportant note stored a moment ago is stale.
    reply = await api.post(
        "/api/archive",
        json={"stale_days": 0, "dry_run": True, "namespace": namespace, "wait_seconds": 60},
    )
    assert reply.status_code == 200, reply.text
    candidates = {c["id"]: c["reason"] for c in reply.json()["candidates"]}
    assert candidates == {stored.json()["id"]: "stale"}
    below = await api.post("/api/archive", json={"stale_days": -1, "namespace": namespace})
    assert below.status_code == 400, below.text
    assert below.json()["field"] == "stale_days"


async def test_contradiction_detection_without_a_body_keeps_a_scoped_keys_limits(
    keyed: Keyed,
) -> None:
    other = await keyed.rw.post("/api/contradictions/detect", json={"namespace": keyed.b})
    assert other.status_code == 403, other.text
    assert other.json()["field"] == "namespace"


async def test_rest_patch_clears_source_uri_and_attribution_given_as_null(
    api: httpx.AsyncClient, namespace: str
) -> None:
    stored = await api.post(
        "/api/memories",
        json={
            "content": "Deploys are frozen during the quarterly audit week.",
            "namespace": namespace,
            "source_uri": "https://wiki.example/freeze",
            "agent": "planner",
            "session_id": "s-9",
        },
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]
    patched = await api.patch(
        f"/api/memories/{memory_id}", json={"source_uri": None, "agent": None}
    )
    assert patched.status_code == 200, patched.text
    got = (await api.get(f"/api/memories/{memory_id}")).json()
    assert got["source_uri"] is None
    assert got["agent"] is None
    assert got["session_id"] == "s-9"
