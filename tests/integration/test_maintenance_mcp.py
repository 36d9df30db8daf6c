"""The maintenance MCP tools over the real stack: structured output for each, the consolidate
dry run by default, and the size of the tool list a model reads."""

from __future__ import annotations

import json
from typing import Any

import httpx
from mcp import Client
from mcp.types import CallToolResult

from exocortex.testing.rest import store

MAINTENANCE_TOOLS = {
    "memory_maintenance",
    "memory_consolidate",
    "memory_contradictions",
    "memory_tag_cleanup",
    "memory_decay_preview",
    "memory_graph",
}


async def _call(mcp: Client, tool: str, **args: Any) -> dict[str, Any]:
    reply: CallToolResult = await mcp.call_tool(tool, args)
    assert not reply.is_error, reply.content
    assert reply.structured_content is not None
    return dict(reply.structured_content)


async def test_the_tool_list_has_thirty_tools_and_its_cost_is_known(mcp: Client) -> None:
    tools = (await mcp.list_tools()).tools
    names = {t.name for t in tools}
    assert len(tools) == 30
    assert names >= MAINTENANCE_TOOLS
    assert all(t.output_schema for t in tools if t.name in MAINTENANCE_TOOLS)

    def visible(ts: list[Any]) -> int:
        # What a model reads: name, description and input schema (about 4 characters a token).
        return sum(
            len(t.name) + len(t.description or "") + len(json.dumps(t.input_schema)) for t in ts
        )

    mine = [t for t in tools if t.name in MAINTENANCE_TOOLS]
    print(
        f"tools/list model-visible: ~{visible(tools) // 4} tokens for {len(tools)} tools, "
        f"~{visible(mine) // 4} of them for the 6 maintenance tools"
    )
    assert visible(mine) // 4 < 1_500


async def test_maintenance_tools_answer_with_structured_content(
    mcp: Client, api: httpx.AsyncClient, namespace: str
) -> None:
    for text in (
        "The nightly Postgres backup runs at 01:30 and is copied to the offsite bucket.",
        "Our database backup job dumps Postgres nightly and uploads the file offsite.",
        "Backup of the Postgres database happens each night; the dump is stored offsite.",
    ):
        await store(api, namespace, text)

    consolidate = await _call(mcp, "memory_consolidate", namespace=namespace, min_similarity=0.6)
    assert consolidate["dry_run"] is True  # the default: nothing is merged
    assert consolidate["clusters_found"] >= 1
    recent = await api.get("/api/memories/recent", params={"namespace": namespace})
    assert all(m["is_active"] for m in recent.json()["results"])

    maintenance = await _call(mcp, "memory_maintenance", namespace=namespace, dry_run=True)
    assert [r["job"] for r in maintenance["runs"]] == ["importance", "archival"]
    assert all(r["status"] == "succeeded" for r in maintenance["runs"])
    assert len(maintenance["checks"]) == 8

    contradictions = await _call(mcp, "memory_contradictions", namespace=namespace, detect=True)
    assert contradictions["detected"] is not None

    decay = await _call(mcp, "memory_decay_preview", namespace=namespace)
    assert decay["total"] == 0  # nothing here is old

    tags = await _call(mcp, "memory_tag_cleanup")
    assert isinstance(tags["suggestions"], list)
    assert tags["merged"] == []

    graph = await _call(mcp, "memory_graph", action="stats", namespace=namespace)
    assert "nodes" in graph["stats"]
