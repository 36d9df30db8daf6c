"""Read-only views: stats, entities and the entity graph."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.context import client

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
Namespace = Annotated[str | None, typer.Option("--namespace", "-n")]


def register(app: typer.Typer) -> None:
    for command in (stats, entities, graph):
        app.command(rich_help_panel="Views")(command)


def _flatten(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _flatten(f"{prefix}{k}.", v)]
    return [(prefix.rstrip("."), value)]


def stats(ctx: typer.Context, namespace: Namespace = None, as_json: Json = False) -> None:
    """Counts of memories, types, sources, entities and tags."""
    with client(ctx) as api:
        numbers = api.get("/api/stats", namespace=namespace)
    if as_json:
        output.emit_json(numbers)
        return
    output.table(["", "value"], _flatten("", numbers))


def entities(
    ctx: typer.Context,
    entity_type: Annotated[str | None, typer.Option("--type", help="e.g. person, project")] = None,
    search: Annotated[str | None, typer.Option("--search", "-s", help="name contains")] = None,
    memories: Annotated[
        str | None, typer.Option("--memories", help="list this entity's memories")
    ] = None,
    namespace: Namespace = None,
    limit: Annotated[int, typer.Option("--limit", "-l")] = 200,
    as_json: Json = False,
) -> None:
    """People, projects, technologies… found in memories."""
    with client(ctx) as api:
        if memories:
            found = api.get(f"/api/entities/{memories}/memories")
        else:
            found = api.get(
                "/api/entities", type=entity_type, search=search, namespace=namespace, limit=limit
            )
    if as_json:
        output.emit_json(found)
        return
    if memories:
        output.table(
            ["id", "created", "content"],
            (
                (m["id"], str(m["created_at"])[:10], output.preview(m["content"]))
                for m in found["memories"]
            ),
            title=found["entity"]["name"],
        )
        return
    output.table(
        ["id", "name", "type", "memories", "aliases"],
        (
            (e["id"], e["name"], e["type"], e.get("memory_count", ""), ", ".join(e["aliases"]))
            for e in found["results"]
        ),
    )


def graph(
    ctx: typer.Context,
    analysis: Annotated[
        bool, typer.Option(help="centrality, bridges and communities instead of the edges")
    ] = False,
    namespace: Namespace = None,
    as_json: Json = False,
) -> None:
    """The entity graph: who relates to what."""
    with client(ctx) as api:
        if analysis:
            found = api.get("/api/entities/graph/analysis", namespace=namespace)
        else:
            found = api.get("/api/entities/graph", namespace=namespace)
    if as_json:
        output.emit_json(found)
        return
    if analysis:
        output.table(["", "value"], _flatten("", found))
        return
    names = {e["id"]: e["name"] for e in found["entities"]}
    output.table(
        ["from", "relationship", "to"],
        (
            (
                names.get(r["source_id"], r["source_id"]),
                r["relationship"],
                names.get(r["target_id"], r["target_id"]),
            )
            for r in found["relationships"]
        ),
        title=f"{len(found['entities'])} entities, {len(found['relationships'])} relationships",
    )
