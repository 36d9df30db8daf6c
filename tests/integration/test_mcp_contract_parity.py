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
