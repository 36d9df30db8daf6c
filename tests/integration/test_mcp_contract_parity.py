"""MCP details of the original's tools, over the real stack: an explicit null clears a field
in memory_update, memory_maintenance takes the original's flags, memory_ping carries the health
checks, and the README counts the tools there are."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp.types import CallToolResult

from exocortex.mcp.tools.maintenance import planned_jobs
from exocortex.testing.wait import until_async

README = Path(__file__).resolve().parents[2] / "README.md"


async def _call(mcp: Client, tool: str, **args: Any) -> dict[str, Any]:
    reply: CallToolResult = await mcp.call_tool(tool, args)
    assert not reply.is_error, reply.content
    assert reply.structured_content is not None
    return dict(reply.structured_content)


async def test_memory_update_clears_source_uri_and_attribution_given_as_null(
    mcp: Client, api: httpx.AsyncClient, namespace: str
) -> None:
    stored = await api.post(
        "/api/memories",
        json={
            "content": "The staging cluster is rebuilt every Monday morning.",
            "namespace": namespace,
            "source_uri": "https://wiki.example/staging",
            "agent": "builder",
            "session_id": "s-1",
        },
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]

    async def read() -> dict[str, Any]:
        got = await api.get(f"/api/memories/{memory_id}")
        assert got.status_code == 200, got.text
        return dict(got.json())

    # Left out: unchanged.
    await _call(mcp, "memory_update", id=memory_id, importance=0.7)
    kept = await read()
    assert kept["source_uri"] == "https://wiki.example/staging"
    assert kept["agent"] == "builder"
    # Given as null: cleared; the other fields stay.
    await _call(mcp, "memory_update", id=memory_id, source_uri=None, agent=None)
    cleared = await read()
    assert cleared["source_uri"] is None
    assert cleared["agent"] is None
    assert cleared["session_id"] == "s-1"
    assert cleared["importance"] == 0.7


async def test_memory_get_says_who_archived_a_memory(
    mcp: Client, api: httpx.AsyncClient, namespace: str
) -> None:
    stored = await api.post(
        "/api/memories",
        json={"content": "The old deploy script lived in tools/deploy.sh.", "namespace": namespace},
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]
    active = (await _call(mcp, "memory_get", ids=[memory_id]))["memories"][0]
    assert active["archived_by"] is None
    trashed = await api.post(f"/api/memories/{memory_id}/archive")
    assert trashed.status_code == 200, trashed.text
    reply: CallToolResult = await mcp.call_tool("memory_get", {"ids": [memory_id]})
    assert reply.structured_content is not None
    got = reply.structured_content["memories"][0]
    assert got["is_active"] is False
    assert got["archived_by"] == "person"
    assert "ARCHIVED by person" in reply.content[0].text  # type: ignore[union-attr]


def test_each_flag_of_the_original_runs_its_job() -> None:
    flags = {
        "reembed": True,
        "backfill_entities": True,
        "recalibrate": True,
        "densify_graph": True,
        "build_co_retrieval_links": True,
        "tune_weights": True,
    }
    plan = planned_jobs([], flags, reembed_all=False, reembed_all_limit=100)
    assert list(plan) == ["repair", "entity-backfill", "recalibration", "graph", "weights"]
    assert plan["repair"]["stale_model"] is False
    everything = planned_jobs(["archival"], {}, reembed_all=True, reembed_all_limit=7)
    assert list(everything) == ["archival", "repair"]
    assert everything["repair"]["stale_model"] is True
    assert everything["repair"]["limit"] == 7
    assert planned_jobs(["importance"], {}, reembed_all=False, reembed_all_limit=1) == {
        "importance": {}
    }


async def test_memory_maintenance_takes_the_originals_flags(mcp: Client, namespace: str) -> None:
    out = await _call(
        mcp,
        "memory_maintenance",
        run=[],
        dry_run=True,
        namespace=namespace,
        backfill_entities=True,
        recalibrate=True,
        densify_graph=True,
        build_co_retrieval_links=True,
        reembed_all=True,
        reembed_all_limit=5,
    )
    assert [r["job"] for r in out["runs"]] == [
        "entity-backfill",
        "recalibration",
        "graph",
        "repair",
    ]
    for run in out["runs"]:
        assert run["status"] in ("succeeded", "running"), run
    assert len(out["checks"]) == 8


async def test_memory_maintenance_reports_quality_friction_and_dangling_entities(
    mcp: Client, api: httpx.AsyncClient, namespace: str
) -> None:
    """The original's report sections: the quality distribution, the searches that found
    nothing (search friction) and the entities at most one active memory names."""
    for name in ("Zanzibar Gateway", "Quokka Scheduler"):
        made = await api.post("/api/entities", json={"name": name, "namespace": namespace})
        assert made.status_code == 201, made.text
    for query in ("obsidian vault sync", "Obsidian  vault SYNC"):
        found = await api.post(
            "/api/memories/search", json={"query": query, "namespace": namespace}
        )
        assert found.json()["results"] == []

    async def report() -> dict[str, Any]:
        return await _call(mcp, "memory_maintenance", run=[], namespace=namespace)

    # Misses are recorded a moment after the searches that found nothing.
    out = await until_async(
        report,
        what="the two misses in the search friction section",
        accept=lambda r: (
            [(m["query"], m["count"]) for m in r["search_friction"]] == [("obsidian vault sync", 2)]
        ),
    )
    assert out["quality_distribution"]["total"] == 0
    dangling = sorted((e["name"], e["memory_count"]) for e in out["dangling_entities"])
    assert dangling == [("Quokka Scheduler", 0), ("Zanzibar Gateway", 0)]
    reply: CallToolResult = await mcp.call_tool(
        "memory_maintenance", {"run": [], "namespace": namespace}
    )
    text = reply.content[0].text  # type: ignore[union-attr]
    assert "Search friction" in text
    assert "'obsidian vault sync': 2×" in text
    assert "Dangling entities" in text
    assert "Zanzibar Gateway (concept)" in text


async def test_entities_listed_by_how_many_active_memories_name_them(
    api: httpx.AsyncClient, namespace: str
) -> None:
    stored = await api.post(
        "/api/memories",
        json={
            "content": "The billing service keeps its invoices in PostgreSQL.",
            "namespace": namespace,
        },
    )
    assert stored.status_code == 201, stored.text
    lonely = await api.post("/api/entities", json={"name": "Heron Cache", "namespace": namespace})
    assert lonely.status_code == 201, lonely.text

    async def listed(max_memories: int) -> list[str]:
        got = await api.get(
            "/api/entities", params={"namespace": namespace, "max_memories": max_memories}
        )
        assert got.status_code == 200, got.text
        return sorted(e["name"] for e in got.json()["results"])

    everything = await until_async(
        lambda: api.get("/api/entities", params={"namespace": namespace}),
        what="enrichment linked the memory's entity",
        accept=lambda r: any(e["memory_count"] == 1 for e in r.json()["results"]),
    )
    linked = sorted(e["name"] for e in everything.json()["results"] if e["memory_count"] == 1)
    assert "Heron Cache" in await listed(0)
    assert not set(linked) & set(await listed(0))
    assert set(linked) <= set(await listed(1))
    refused = await api.get("/api/entities", params={"max_memories": -1})
    assert refused.status_code in (400, 422)
    assert "max_memories" in refused.text


async def test_memory_ping_carries_the_health_checks(mcp: Client, namespace: str) -> None:
    out = await _call(mcp, "memory_ping", namespace=namespace)
    assert out["status"]
    assert out["health"] in ("ok", "warn", "critical")
    assert len(out["checks"]) == 8
    reply: CallToolResult = await mcp.call_tool("memory_ping", {"namespace": namespace})
    text = reply.content[0].text  # type: ignore[union-attr]
    assert "memory health:" in text


async def test_the_readme_counts_the_tools_there_are(mcp: Client) -> None:
    tools = (await mcp.list_tools()).tools
    counted = re.search(r"^(\d+) tools \(`memory_\*`, `goal_\*`\)", README.read_text(), re.M)
    assert counted is not None
    assert int(counted.group(1)) == len(tools)
