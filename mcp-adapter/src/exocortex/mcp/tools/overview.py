"""Overview tools: a project snapshot and a health/stats ping."""

from __future__ import annotations

import asyncio
from pathlib import PurePath
from typing import Annotated, Any

from pydantic import Field

from exocortex.api.limits import SNAPSHOT_DAYS_MAX
from exocortex.mcp.common import Api, hit, render_hit, result
from exocortex.mcp.gateway import UnsupportedRoute
from exocortex.mcp.models import Hit, PingOutput, SnapshotOutput
from exocortex.mcp.tools.goals import goal, render_goal
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult


async def memory_project_snapshot(
    ctx: Context,
    project: str | None = None,
    cwd: Annotated[str | None, Field(description="its folder name is the project")] = None,
    days: Annotated[int, Field(ge=1, le=SNAPSHOT_DAYS_MAX)] = 14,
    namespace: str | None = None,
) -> Annotated[CallToolResult, SnapshotOutput]:
    """Project snapshot: recent activity, decisions, open threads, techniques, goals."""
    name = (project or "").strip() or (PurePath(cwd.strip()).name if cwd else "")
    if not name:
        raise ToolError("give `project`, or `cwd` whose folder name is the project")
    # One read: the server runs the sections at once, as compact searches that count no access.
    raw = await Api(ctx).call(
        "GET", "/api/snapshot", params={"project": name, "days": days, "namespace": namespace}
    )
    out = SnapshotOutput(
        project=name,
        since=str(raw["since"]),
        recent=_hits(raw, "recent"),
        decisions=_hits(raw, "decisions"),
        open_threads=_hits(raw, "open_threads"),
        techniques=_hits(raw, "techniques"),
        goals=[goal(g) for g in raw.get("goals") or []],
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
    lines += [f"- {render_goal(g, detail=False)}" for g in out.goals] or ["- none"]
    return result("\n".join(lines), out)


def _hits(raw: dict[str, Any], section: str) -> list[Hit]:
    """A section's compact results ({id, preview, score, tags, created_at}) as result lines."""
    return [
        hit(r, score=r.get("score"), preview=r.get("preview", "")) for r in raw.get(section) or []
    ]


async def memory_ping(
    ctx: Context, namespace: str | None = None
) -> Annotated[CallToolResult, PingOutput]:
    """Is Exocortex up? Health of its parts, memory counts and the memory health checks."""
    api = Api(ctx)
    health, counts, checks = await asyncio.gather(
        api.call("GET", "/health"), _counts(api, namespace), _checks(api, namespace)
    )
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
            "health": (checks or {}).get("overall"),
            "checks": (checks or {}).get("checks") or [],
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
    if out.health is not None:
        lines.append(f"  memory health: {out.health}")
        for c in out.checks:
            tip = f" → {c.suggestion}" if c.status != "ok" and c.suggestion else ""
            lines.append(f"  - {c.name}: {c.status} ({c.detail}){tip}")
    return result("\n".join(lines), out)


async def _checks(api: Api, namespace: str | None) -> dict[str, Any] | None:
    try:
        raw = await api.call("GET", "/api/maintenance/health", params={"namespace": namespace})
    except UnsupportedRoute:
        return None
    return raw if isinstance(raw, dict) else None


async def _counts(api: Api, namespace: str | None) -> dict[str, Any] | None:
    try:
        raw = await api.call("GET", "/api/ping", params={"namespace": namespace})
    except UnsupportedRoute:
        return None
    return raw if isinstance(raw, dict) else None


def register(server: MCPServer) -> None:
    server.add_tool(memory_project_snapshot)
    server.add_tool(memory_ping)
