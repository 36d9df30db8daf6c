"""Goals, their progress notes and milestones."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.context import ExoGroup, client, csv, read_text_argument

app = typer.Typer(
    cls=ExoGroup, help="Goals: list, create, log progress, milestones.", no_args_is_help=True
)

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
WIDE = 110  # columns from which the list shows status and counts too
GoalId = Annotated[str, typer.Argument(help="the goal's id")]


def _show(goal: dict[str, Any]) -> None:
    output.fields(
        [
            ("id", goal["id"]),
            ("title", goal["title"]),
            ("status", goal["status"]),
            ("priority", goal["priority"]),
            ("deadline", goal.get("deadline")),
            ("description", goal.get("description")),
            ("progress notes", goal.get("progress_count")),
        ]
    )
    if goal["milestones"]:
        output.table(
            ["#", "milestone id", "status", "title"],
            ((m["order"], m["id"], m["status"], m["title"]) for m in goal["milestones"]),
            title="milestones",
        )


def _milestone_count(goal: dict[str, Any]) -> str:
    done = sum(m["status"] == "completed" for m in goal["milestones"])
    return f"{done}/{len(goal['milestones'])}"


@app.command("list")
def list_goals(
    ctx: typer.Context,
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = "default",
    status: Annotated[
        str, typer.Option(help="active, completed, stalled, abandoned or all")
    ] = "active",
    as_json: Json = False,
) -> None:
    """Goals by priority, then newest."""
    with client(ctx) as api:
        found = api.get("/api/goals", namespace=namespace, status=status)
    if as_json:
        output.emit_json(found)
        return
    # Status and counts when the terminal has room for them.
    wide = output.stdout.width >= WIDE
    output.table(
        ["id", "priority", *(["status", "milestones", "notes"] if wide else []), "title"],
        (
            (
                g["id"],
                g["priority"],
                *([g["status"], _milestone_count(g), g["progress_count"]] if wide else []),
                g["title"],
            )
            for g in found["results"]
        ),
    )


@app.command()
def create(
    ctx: typer.Context,
    title: Annotated[str, typer.Argument(help="what you want to reach")],
    description: Annotated[str | None, typer.Option("--description", "-d")] = None,
    priority: Annotated[str, typer.Option(help="low, medium, high or critical")] = "medium",
    deadline: Annotated[str | None, typer.Option(help="ISO date-time")] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = "default",
    as_json: Json = False,
) -> None:
    """Create a goal."""
    body = {"title": title, "priority": priority, "namespace": namespace}
    body.update({k: v for k, v in {"description": description, "deadline": deadline}.items() if v})
    with client(ctx) as api:
        goal = api.post("/api/goals", body)
    if as_json:
        output.emit_json(goal)
    else:
        output.stdout.print(f"created goal [bold]{goal['id']}[/bold]")


@app.command()
def show(ctx: typer.Context, goal_id: GoalId, as_json: Json = False) -> None:
    """A goal with its milestones and latest progress."""
    with client(ctx) as api:
        goal = api.get(f"/api/goals/{goal_id}")
    if as_json:
        output.emit_json(goal)
        return
    _show(goal)
    if goal.get("progress"):
        output.table(
            ["created", "note"],
            ((str(m["created_at"])[:16], output.preview(m["content"])) for m in goal["progress"]),
            title="latest progress",
        )


@app.command()
def log(
    ctx: typer.Context,
    goal_id: GoalId,
    content: Annotated[
        str | None, typer.Argument(help="the progress note; `-` reads stdin")
    ] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t")] = None,
    as_json: Json = False,
) -> None:
    """Log progress on a goal (stored as a searchable note linked to it)."""
    body = {"content": read_text_argument(content, "progress note"), "tags": csv(tags)}
    with client(ctx) as api:
        logged = api.post(f"/api/goals/{goal_id}/progress", body)
    if as_json:
        output.emit_json(logged)
    else:
        output.stdout.print(
            f"logged [bold]{logged['memory']['id']}[/bold] on {logged['goal']['title']!r} "
            f"({logged['goal']['progress_count']} notes)"
        )


@app.command()
def milestones(
    ctx: typer.Context,
    goal_id: GoalId,
    add: Annotated[str | None, typer.Option(help="add a milestone with this title")] = None,
    complete: Annotated[str | None, typer.Option(help="mark this milestone id completed")] = None,
    remove: Annotated[str | None, typer.Option(help="remove this milestone id")] = None,
    as_json: Json = False,
) -> None:
    """List a goal's milestones, or add, complete or remove one."""
    with client(ctx) as api:
        if add:
            goal = api.post(f"/api/goals/{goal_id}/milestones", {"title": add})
        elif complete:
            goal = api.patch(f"/api/goals/{goal_id}/milestones/{complete}", {"status": "completed"})
        elif remove:
            goal = api.delete(f"/api/goals/{goal_id}/milestones/{remove}")
        else:
            goal = api.get(f"/api/goals/{goal_id}")
    if as_json:
        output.emit_json(goal["milestones"])
        return
    _show(goal)


@app.command()
def done(ctx: typer.Context, goal_id: GoalId, as_json: Json = False) -> None:
    """Mark a goal completed."""
    with client(ctx) as api:
        goal = api.patch(f"/api/goals/{goal_id}", {"status": "completed"})
    if as_json:
        output.emit_json(goal)
    else:
        output.stdout.print(f"completed [bold]{goal['title']}[/bold]")
