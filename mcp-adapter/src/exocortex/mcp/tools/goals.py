"""Goal tools: persistent objectives with milestones and a progress log."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from exocortex.api.limits import PROGRESS_LIMIT_MAX
from exocortex.api.vocabulary import GoalStatus, MilestoneStatus, Priority
from exocortex.mcp.common import Api, body, check_id, hit, items, require_text, result
from exocortex.mcp.models import Goal, GoalListOutput, GoalLogOutput, GoalOutput
from exocortex.mcp.tools.writes import Unit
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

Deadline = Annotated[str | None, Field(description="ISO 8601 date")]


def goal(raw: dict[str, Any]) -> Goal:
    progress = raw.get("progress") or []
    return Goal.model_validate({**raw, "progress": [hit(p) for p in progress]})


def render_goal(g: Goal, *, detail: bool = True) -> str:
    done = sum(m.status == "completed" for m in g.milestones)
    head = f"[{g.id}] {g.title} ({g.status}, {g.priority}"
    head += f", due {g.deadline[:10]}" if g.deadline else ""
    head += f", milestones {done}/{len(g.milestones)}" if g.milestones else ""
    head += f", {g.progress_count} progress notes)" if g.progress_count else ")"
    if not detail:
        return head
    lines = [head]
    if g.description:
        lines.append(f"  {g.description}")
    for m in sorted(g.milestones, key=lambda m: m.order or 0):
        box = {"completed": "x", "in_progress": "~"}.get(m.status, " ")
        due = f" (due {m.deadline[:10]})" if m.deadline else ""
        lines.append(f"  [{box}] {m.title}{due} id {m.id}")
    if g.progress:
        lines.append("  Progress:")
        lines += [f"  - {p.created_at[:10] if p.created_at else ''} {p.text}" for p in g.progress]
    return "\n".join(lines)


async def goal_create(
    ctx: Context,
    title: Annotated[str, Field(min_length=1)],
    description: str | None = None,
    priority: Priority = "medium",
    deadline: Deadline = None,
    metadata: dict[str, Any] | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, GoalOutput]:
    """Create a persistent goal."""
    raw = await Api(ctx).call(
        "POST",
        "/api/goals",
        json=body(
            title=require_text(title, "title"),
            description=description,
            priority=priority,
            deadline=deadline,
            metadata=metadata,
            namespace=namespace,
        ),
    )
    g = goal(raw)
    return result("Created goal " + render_goal(g, detail=False), GoalOutput(goal=g))


async def goal_list(
    ctx: Context,
    status: GoalStatus | Literal["all"] = "active",
    include_progress: Annotated[bool, Field(description="show milestones")] = False,
    namespace: str | None = None,
) -> Annotated[CallToolResult, GoalListOutput]:
    """List goals by status."""
    raw = await Api(ctx).call(
        "GET", "/api/goals", params={"status": status, "namespace": namespace}
    )
    goals = [goal(g) for g in items(raw, "results", "goals")]
    out = GoalListOutput(count=len(goals), goals=goals)
    if not goals:
        return result(f"No {status} goals.", out)
    text = "\n".join(render_goal(g, detail=include_progress) for g in goals)
    return result(f"{len(goals)} goals:\n{text}", out)


async def goal_get(
    ctx: Context, id: str, progress_limit: Annotated[int, Field(ge=1, le=PROGRESS_LIMIT_MAX)] = 10
) -> Annotated[CallToolResult, GoalOutput]:
    """A goal with its milestones and recent progress."""
    raw = await Api(ctx).call(
        "GET", f"/api/goals/{check_id(id)}", params={"progress_limit": progress_limit}
    )
    g = goal(raw)
    return result(render_goal(g), GoalOutput(goal=g))


async def goal_update(
    ctx: Context,
    id: str,
    title: str | None = None,
    description: Annotated[str | None, Field(description="empty clears")] = None,
    status: GoalStatus | None = None,
    priority: Priority | None = None,
    deadline: Annotated[str | None, Field(description="ISO 8601 date; empty clears")] = None,
    metadata: Annotated[dict[str, Any] | None, Field(description="merged")] = None,
) -> Annotated[CallToolResult, GoalOutput]:
    """Change a goal's fields or status."""
    patch = body(
        title=require_text(title, "title") if title is not None else None,
        status=status,
        priority=priority,
        metadata=metadata,
    )
    if description is not None:
        patch["description"] = description or None
    if deadline is not None:
        patch["deadline"] = deadline or None
    if not patch:
        raise ToolError("nothing to update: give at least one field besides `id`")
    raw = await Api(ctx).call("PATCH", f"/api/goals/{check_id(id)}", json=patch)
    g = goal(raw)
    return result("Updated goal " + render_goal(g, detail=False), GoalOutput(goal=g))


async def goal_log(
    ctx: Context, id: str, content: Annotated[str, Field(min_length=1)], importance: Unit = 0.5
) -> Annotated[CallToolResult, GoalLogOutput]:
    """Log progress on a goal (stored as a memory linked to it)."""
    raw = await Api(ctx).call(
        "POST",
        f"/api/goals/{check_id(id)}/progress",
        json={"content": require_text(content, "content"), "importance": importance},
    )
    out = GoalLogOutput(goal_id=id, memory_id=str((raw.get("memory") or {}).get("id")))
    return result(f"Logged progress on goal {id} (memory {out.memory_id})", out)


async def goal_add_milestone(
    ctx: Context,
    id: str,
    title: Annotated[str, Field(min_length=1)],
    order: Annotated[int | None, Field(ge=0, description="default: last")] = None,
    deadline: Deadline = None,
) -> Annotated[CallToolResult, GoalOutput]:
    """Add a milestone to a goal."""
    raw = await Api(ctx).call(
        "POST",
        f"/api/goals/{check_id(id)}/milestones",
        json=body(title=require_text(title, "title"), order=order, deadline=deadline),
    )
    g = await _goal_after(ctx, id, raw)
    return result("Added milestone\n" + render_goal(g), GoalOutput(goal=g))


async def goal_update_milestone(
    ctx: Context,
    goal_id: str,
    milestone_id: str,
    title: str | None = None,
    status: MilestoneStatus | None = None,
    order: Annotated[int | None, Field(ge=0)] = None,
    deadline: Annotated[str | None, Field(description="ISO 8601 date; empty clears")] = None,
) -> Annotated[CallToolResult, GoalOutput]:
    """Change a milestone's title, status, order or deadline."""
    patch = body(
        title=require_text(title, "title") if title is not None else None,
        status=status,
        order=order,
    )
    if deadline is not None:
        patch["deadline"] = deadline or None
    if not patch:
        raise ToolError("nothing to update: give title, status, order or deadline")
    raw = await Api(ctx).call(
        "PATCH",
        _milestone_path(goal_id, milestone_id),
        json=patch,
    )
    g = await _goal_after(ctx, goal_id, raw)
    return result("Updated milestone\n" + render_goal(g), GoalOutput(goal=g))


async def goal_remove_milestone(
    ctx: Context, goal_id: str, milestone_id: str
) -> Annotated[CallToolResult, GoalOutput]:
    """Remove a milestone from a goal."""
    raw = await Api(ctx).call(
        "DELETE",
        _milestone_path(goal_id, milestone_id),
    )
    g = await _goal_after(ctx, goal_id, raw)
    return result("Removed milestone\n" + render_goal(g), GoalOutput(goal=g))


def _milestone_path(goal_id: str, milestone_id: str) -> str:
    return (
        f"/api/goals/{check_id(goal_id, 'goal_id')}"
        f"/milestones/{check_id(milestone_id, 'milestone_id')}"
    )


async def _goal_after(ctx: Context, goal_id: str, raw: Any) -> Goal:
    """The goal after a milestone change: the reply when it is the goal, else re-read it."""
    if isinstance(raw, dict) and "title" in raw and "milestones" in raw:
        return goal(raw)
    return goal(await Api(ctx).call("GET", f"/api/goals/{check_id(goal_id, 'goal_id')}"))


def register(server: MCPServer) -> None:
    for tool in (
        goal_create,
        goal_list,
        goal_get,
        goal_update,
        goal_log,
        goal_add_milestone,
        goal_update_milestone,
        goal_remove_milestone,
    ):
        server.add_tool(tool)
