"""Overview tools: a project snapshot and a health/stats ping."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Annotated, Any

from pydantic import Field

from exocortex.mcp.common import Api, body, items, render_hit, result
from exocortex.mcp.gateway import UnsupportedRoute
from exocortex.mcp.models import Goal, Hit, PingOutput, SnapshotOutput
from exocortex.mcp.tools.goals import goal, render_goal
from exocortex.mcp.tools.reads import search
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

OPEN_THREAD_TAGS = ["plan", "todo", "next-steps", "in-progress"]


async def memory_project_snapshot(
    ctx: Context,
    project: str | None = None,
    cwd: Annotated[str | None, Field(description="its folder name is the project")] = None,
    days: Annotated[int, Field(ge=1, le=365)] = 14,
    namespace: str | None = None,
) -> Annotated[CallToolResult, SnapshotOutput]:
    """Project snapshot: recent activity, decisions, open threads, techniques, goals."""
    name = (project or "").strip() or (PurePath(cwd.strip()).name if cwd else "")
    if not name:
        raise ToolError("give `project`, or `cwd` whose folder name is the project")
    api = Api(ctx)
    since = (datetime.now(UTC) - timedelta(days=days)).isoformat()

    async def find(limit: int, **filters: Any) -> list[Hit]:
        payload = body(query=name, limit=limit, namespace=namespace, compact=True, **filters)
        return (await search(api, payload)).results

    recent, decisions, threads, techniques, goals = await asyncio.gather(
        find(10, after=since),
        find(5, tags=["decision"]),
        find(5, tags=OPEN_THREAD_TAGS),
        find(5, tags=["technique"]),
        _active_goals(api, namespace),
    )
    out = SnapshotOutput(
        project=name,
        since=since,
        recent=recent,
        decisions=decisions,
        open_threads=threads,
        techniques=techniques,
        goals=goals or [],
    )
    lines = [f"# Project snapshot: {name} (last {days} days)"]
    for title, hits in (
        ("Recent activity", out.recent),
        ("Decisions", out.decisions),
        ("Open threads", out.open_threads),
        ("Techniques", out.techniques),
    ):
        lines.append(f"## {title}")
        lines += [f"- {render_hit(h, full=False)}" for h in hits] or ["- none"]
    lines.append("## Active goals")
    if goals is None:
        lines.append("- (this server does not support goals yet)")
    else:
        lines += [f"- {render_goal(g, detail=False)}" for g in out.goals] or ["- none"]
    return result("\n".join(lines), out)


async def memory_ping(
    ctx: Context, namespace: str | None = None
) -> Annotated[CallToolResult, PingOutput]:
    """Is Exocortex up? Health of its parts and memory counts."""
    api = Api(ctx)
    health, counts = await asyncio.gather(api.call("GET", "/health"), _counts(api, namespace))
    deps = {
        name: str(state.get("status", state)) if isinstance(state, dict) else str(state)
        for name, state in (health.get("dependencies") or {}).items()
    }
    out = PingOutput.model_validate(
        {
            **(counts or {}),
            "status": health.get("status", "unknown"),
            "gateway_url": api.state.gateway.base_url,
            "dependencies": deps,
        }
    )
    lines = [f"Exocortex {out.status} at {out.gateway_url}"]
    if deps:
        lines.append("  " + ", ".join(f"{k}: {v}" for k, v in deps.items()))
    if counts is None:
        lines.append("  counts: this server does not support GET /api/ping yet")
    else:
        lines.append(
            f"  {out.active} active memories ({out.total} in all, {out.chunks} chunks), "
            f"{out.entities} entities, {out.tags} tags; oldest {out.oldest}, newest {out.newest}"
        )
    return result("\n".join(lines), out)


async def _active_goals(api: Api, namespace: str | None) -> list[Goal] | None:
    """Active goals, or None from a server without goal routes (the rest still helps)."""
    try:
        raw = await api.call(
            "GET", "/api/goals", params={"status": "active", "namespace": namespace}
        )
    except UnsupportedRoute:
        return None
    return [goal(g) for g in items(raw, "results", "goals")]


async def _counts(api: Api, namespace: str | None) -> dict[str, Any] | None:
    try:
        raw = await api.call("GET", "/api/ping", params={"namespace": namespace})
    except UnsupportedRoute:
        return None
    return raw if isinstance(raw, dict) else None


def register(server: MCPServer) -> None:
    server.add_tool(memory_project_snapshot)
    server.add_tool(memory_ping)
