"""Repair, tags, graph, retrieval regression and health on the real stack."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from exocortex.api.limits import TAG_SUGGESTIONS_MAX
from exocortex.core.ids import new_id
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import search, store, wait_all_enriched, wait_enriched
from exocortex.testing.settings import settings_applied
from exocortex.testing.settle import wait_projector_drained


async def _run(
    api: httpx.AsyncClient, job: str, namespace: str | None = None, **body: Any
) -> dict[str, Any]:
    reply = await api.post(
        f"/api/maintenance/jobs/{job}/run",
        json={"namespace": namespace, "wait_seconds": 120, **body},
    )
    assert reply.status_code == 200, reply.text
    run = reply.json()
    assert run["status"] == "succeeded", run["error"]
    return dict(run["report"])


async def test_reembed_restores_missing_and_stale_vectors(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    lost = await store(api, namespace, "The telescope mirror zq7lost was recoated in March.")
    stale = await store(api, namespace, "Sourdough starter zq7stale is fed at seven each night.")
    await wait_all_enriched(api, lost, stale)
    await stack_db.execute(
        "UPDATE memories SET embedding = NULL, version = version + 1 WHERE id = %s", (lost,)
    )
    await stack_db.execute(
        "UPDATE memories SET embedding_model = 'an-older-model' WHERE id = %s", (stale,)
    )
    preview = (await api.post("/api/reembed", json={"dry_run": True})).json()
    assert preview["to_embed"].get("missing", 0) >= 1
    assert preview["to_embed"].get("stale_model", 0) >= 1

    reply = await api.post("/api/reembed", json={})
    assert reply.status_code == 200, reply.text
    assert reply.json()["processed"] >= 2
    rows = await (
        await stack_db.execute(
            "SELECT id, embedding IS NOT NULL AS has, embedding_model FROM memories "
            "WHERE id = ANY(%s)",
            ([lost, stale],),
        )
    ).fetchall()
    model = reply.json()["model"]
    assert all(r["has"] and r["embedding_model"] == model for r in rows), rows
    # Found again by meaning (no shared words), so the vector is back in the index.
    found = await search(api, namespace, "astronomy optics coating")
    assert lost in {r["memory"]["id"] if "memory" in r else r["id"] for r in found["results"]}


async def test_tag_merge_renames_everywhere_and_records_the_alias(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    right, wrong = f"kubernetes-{namespace}", f"kubernets-{namespace}"
    ids = [
        await store(api, namespace, "Cluster upgrade to 1.31 planned.", tags=[right]),
        await store(api, namespace, "Ingress controller swapped for Gateway API.", tags=[right]),
        await store(api, namespace, "Node pool autoscaling max raised to 12.", tags=[wrong]),
        await store(api, namespace, "Pod disruption budgets added to the API.", tags=[wrong]),
    ]
    # The preview spans every namespace: other tests' near-duplicate tags compete for its
    # places, so the pair is looked for among all of them (``suggestion_count`` says how many).
    preview = (
        await api.post(
            "/api/maintenance/tags/merge",
            json={"dry_run": True, "limit": TAG_SUGGESTIONS_MAX},
        )
    ).json()
    assert preview["suggestion_count"] <= TAG_SUGGESTIONS_MAX, "the preview cannot show them all"
    pairs = {(s["from_tag"], s["to_tag"]) for s in preview["suggestions"]}
    assert (wrong, right) in pairs or (right, wrong) in pairs

    # The job writes the alias map and announces it: ingest drops its cached settings.
    async with settings_applied(exo_stack.nats_url, ["ingest"]):
        reply = await api.post(
            "/api/maintenance/tags/merge", json={"from_tag": wrong, "to_tag": right}
        )
    assert reply.status_code == 200, reply.text
    assert reply.json()["merges"][0]["memories"] == 2
    for memory_id in ids:
        tags = (await api.get(f"/api/memories/{memory_id}")).json()["tags"]
        assert right in tags
        assert wrong not in tags
    aliases = json.loads((await api.get("/api/settings")).json()["tags.alias_map"])
    assert aliases[wrong] == right
    # A later store with the old spelling is normalised to the merged one, at once.
    later = await store(api, namespace, "Helm charts pinned to exact versions.", tags=[wrong])
    tags = (await api.get(f"/api/memories/{later}")).json()["tags"]
    assert right in tags
    assert wrong not in tags


async def test_graph_links_memories_retrieved_together_once(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    a = await store(api, namespace, "The release train leaves every second Tuesday.")
    b = await store(api, namespace, "Hotfixes skip the release train and go out the same day.")
    for _ in range(3):
        await stack_db.execute(
            "INSERT INTO co_retrievals (namespace, query_hash, memory_ids, result_count) "
            "VALUES (%s, 'q', %s, 2)",
            (namespace, [a, b]),
        )
    first = await _run(api, "graph", namespace)
    assert first["links_created"] == 1, first
    links = (await api.get(f"/api/memories/{a}/links")).json()["links"]
    assert [(link["memory_id"], link["link_type"]) for link in links] == [(b, "related")]
    strength = links[0]["strength"]
    second = await _run(api, "graph", namespace)
    assert second.get("links_created", 0) == 0
    assert second.get("links_strengthened", 0) == 0
    again = (await api.get(f"/api/memories/{a}/links")).json()["links"]
    assert again[0]["strength"] == strength


async def test_retrieval_regression_sets_baselines_then_compares(
    api: httpx.AsyncClient, namespace: str
) -> None:
    await store(api, namespace, "The on-call handbook lives in the ops wiki.")
    await store(api, namespace, "Escalate to the incident commander after 15 minutes.")
    query = f"on-call escalation {namespace}"
    params = {"queries": [{"query": query, "namespace": namespace}]}
    first = await _run(api, "retrieval-regression", params=params)
    assert first["baselines_set"] == 1
    second = await _run(api, "retrieval-regression", params=params)
    assert second["baselines_set"] == 0
    assert second["results"][0]["overlap_at_10"] == 1.0
    assert second["results"][0]["alert"] is False

    latest = (await api.get("/api/retrieval-regression/latest")).json()
    assert latest["run_id"] == second["run_id"]
    assert latest["results"][0]["query"] == query
    runs = (await api.get("/api/retrieval-regression/runs", params={"limit": 5})).json()["runs"]
    assert {first["run_id"], second["run_id"]} <= {r["run_id"] for r in runs}


async def test_health_checks_are_eight_and_graded(api: httpx.AsyncClient, namespace: str) -> None:
    await store(api, namespace, "A note without any tag at all.")
    reply = await api.get("/api/maintenance/health", params={"namespace": namespace})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    checks = {c["name"]: c for c in body["checks"]}
    assert len(checks) == 8
    assert checks["tag_sparsity"]["status"] == "critical"  # 1 of 1 untagged
    assert checks["growth_stall"]["status"] == "ok"
    assert body["overall"] == "critical"


async def _reconciled_once(stack: Stack) -> None:
    """Wait for retrieval's start-up reconcile, so the repairs below are the reindex job's."""
    port = stack.config.metrics_ports["retrieval"]
    async with httpx.AsyncClient(timeout=5.0) as client:
        for _ in range(600):
            text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
            for family in text_string_to_metric_families(text):
                if family.name == "exo_reconciler_last_run_timestamp_seconds" and any(
                    s.value > 0 for s in family.samples
                ):
                    return
            await asyncio.sleep(0.5)
    raise AssertionError("retrieval's start-up reconcile never ran")


async def test_reindex_restores_search_over_a_damaged_index(
    api: httpx.AsyncClient, namespace: str, stack_db: Any, exo_stack: Stack
) -> None:
    """A row the indexes lost (added behind the projector's back, no event) is not found, and a
    changed row is stale in both indexes, until the reindex job has retrieval reconcile them."""
    await _reconciled_once(exo_stack)
    kept = await store(api, namespace, "The greenhouse thermostat was recalibrated in spring.")
    # Enrichment's event for `kept`, applied after the damage below, would re-project it.
    await wait_enriched(api, kept)
    await wait_projector_drained(exo_stack)
    row = await (await stack_db.execute("SELECT * FROM memories WHERE id = %s", (kept,))).fetchone()
    # A copy of the row under a new id, and a new word in the original: neither reached the
    # indexes (no event).
    lost = new_id()
    await stack_db.execute(
        "INSERT INTO memories (id, namespace, content, embedding, embedding_model, embedding_dim,"
        " content_hash) VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (
            lost,
            namespace,
            "Orchard ladder qx9orchard is stored behind the barn.",
            row["embedding"],
            row["embedding_model"],
            row["embedding_dim"],
            "lost-" + namespace,
        ),
    )
    await stack_db.execute(
        "UPDATE memories SET content = content || ' Token qx9stale.', version = version + 1 "
        "WHERE id = %s",
        (kept,),
    )

    def ids(found: Any) -> set[str]:
        return {r["memory"]["id"] if "memory" in r else r["id"] for r in found["results"]}

    assert lost not in ids(await search(api, namespace, "qx9orchard"))

    reply = await api.post("/api/maintenance/reindex", json={"wait_seconds": 120})
    assert reply.status_code == 200, reply.text
    repaired = reply.json()["repaired"]
    assert repaired.get("keyword/missing", 0) >= 1, repaired
    assert repaired.get("vector/missing", 0) >= 1, repaired
    assert repaired.get("keyword/stale", 0) >= 1, repaired
    assert repaired.get("vector/stale", 0) >= 1, repaired

    assert lost in ids(await search(api, namespace, "qx9orchard"))
    # Repairs only what differs: a second pass finds nothing.
    again = await api.post("/api/maintenance/reindex", json={"wait_seconds": 120})
    assert again.json()["repaired"] == {}
