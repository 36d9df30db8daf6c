"""Memories one at a time: add, get, update, archive, restore, forget, and the recent list."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.context import client, csv, read_text_argument

ContentType = typer.Option("--type", help="text, note, decision, conversation or summary")
Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
WIDE = 110  # columns from which a list shows type and tags too
Namespace = Annotated[str | None, typer.Option("--namespace", "-n", help="namespace")]


def register(app: typer.Typer) -> None:
    for command in (add, get, update, archive, restore, forget, recent):
        app.command(rich_help_panel="Memories")(command)


def _memory_fields(memory: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("id", memory.get("id")),
        ("namespace", memory.get("namespace")),
        ("type", memory.get("content_type")),
        ("tags", memory.get("tags")),
        ("importance", memory.get("importance")),
        ("source", memory.get("source")),
        ("source uri", memory.get("source_uri")),
        ("active", memory.get("is_active")),
        ("created", memory.get("created_at")),
        ("updated", memory.get("updated_at")),
        ("content", memory.get("content")),
    ]


def add(
    ctx: typer.Context,
    content: Annotated[
        str | None, typer.Argument(help="the memory text; `-` or a pipe reads standard input")
    ] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t", help="comma-separated")] = None,
    importance: Annotated[float | None, typer.Option("--importance", "-i", help="0-1")] = None,
    content_type: Annotated[str, ContentType] = "text",
    source: Annotated[str, typer.Option(help="where it came from")] = "cli",
    source_uri: Annotated[str | None, typer.Option(help="a file or URL it came from")] = None,
    namespace: Annotated[str, typer.Option("--namespace", "-n")] = "default",
    agent: Annotated[str | None, typer.Option(help="the agent that wrote it")] = None,
    provider: Annotated[
        str | None, typer.Option(help="attribution: the model's provider, e.g. anthropic")
    ] = None,
    model_id: Annotated[str | None, typer.Option(help="attribution: the model's id")] = None,
    model_name: Annotated[str | None, typer.Option(help="attribution: the model's name")] = None,
    session_id: Annotated[str | None, typer.Option(help="attribution: session id")] = None,
    conversation_id: Annotated[
        str | None, typer.Option(help="attribution: conversation id")
    ] = None,
    benchmark: Annotated[
        bool,
        typer.Option(
            "--benchmark",
            help="a benchmark artifact: low importance, tagged benchmark-artifact, kept out of "
            "ordinary search",
        ),
    ] = False,
    metadata: Annotated[
        str | None, typer.Option(help='a JSON object, e.g. \'{"project": "exo"}\'')
    ] = None,
    as_json: Json = False,
) -> None:
    """Store a memory (from the argument or standard input)."""
    body: dict[str, Any] = {
        "content": read_text_argument(content, "memory text"),
        "tags": csv(tags),
        "content_type": content_type,
        "source": source,
        "namespace": namespace,
    }
    optional = {
        "importance": importance,
        "source_uri": source_uri,
        "agent": agent,
        "provider": provider,
        "model_id": model_id,
        "model_name": model_name,
        "session_id": session_id,
        "conversation_id": conversation_id,
        "benchmark": benchmark or None,
        "metadata": _json_object(metadata, "--metadata"),
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    with client(ctx) as api:
        stored = api.post("/api/memories", body)
    if as_json:
        output.emit_json(stored)
        return
    action = stored.get("dedup_action", "created")
    verb = {"skipped": "already stored as", "merged": "merged into"}.get(action, "stored")
    output.stdout.print(f"{verb} [bold]{stored['id']}[/bold]")
    output.fields(
        [
            ("type", stored.get("content_type")),
            ("tags", stored.get("tags")),
            ("searchable", "yes" if stored.get("indexed") else "in a moment"),
        ]
    )


def get(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="the memory's id")],
    links: Annotated[bool, typer.Option("--links", help="also list its links")] = False,
    as_json: Json = False,
) -> None:
    """Show one memory."""
    with client(ctx) as api:
        memory = api.get(f"/api/memories/{memory_id}")
        linked = api.get(f"/api/memories/{memory_id}/links") if links else None
    if as_json:
        output.emit_json({**memory, "links": linked["links"]} if linked else memory)
        return
    output.fields(_memory_fields(memory))
    if linked:
        output.table(
            ["link", "direction", "strength", "memory", "preview"],
            (
                (
                    link["link_type"],
                    link["direction"],
                    f"{link['strength']:.2f}",
                    link["memory_id"],
                    output.preview(link["preview"]["content"], 60),
                )
                for link in linked["links"]
            ),
        )


def update(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="the memory's id")],
    content: Annotated[str | None, typer.Option(help="new text (`-` reads standard input)")] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t", help="replace the tags")] = None,
    importance: Annotated[float | None, typer.Option("--importance", "-i")] = None,
    content_type: Annotated[str | None, ContentType] = None,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n", help="move it")] = None,
    metadata: Annotated[
        str | None, typer.Option(help="JSON object merged into the metadata")
    ] = None,
    as_json: Json = False,
) -> None:
    """Change fields of a memory (new text is re-embedded)."""
    body: dict[str, Any] = {
        "content": read_text_argument(content, "new text") if content is not None else None,
        "tags": csv(tags) if tags is not None else None,
        "importance": importance,
        "content_type": content_type,
        "namespace": namespace,
        "metadata": _json_object(metadata, "--metadata"),
    }
    body = {k: v for k, v in body.items() if v is not None}
    if not body:
        raise typer.BadParameter("give at least one field to change (see --help)")
    with client(ctx) as api:
        memory = api.patch(f"/api/memories/{memory_id}", body)
    if as_json:
        output.emit_json(memory)
    else:
        output.stdout.print(f"updated [bold]{memory['id']}[/bold] (version {memory['version']})")


def archive(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="the memory's id")],
    as_json: Json = False,
) -> None:
    """Move a memory to the archive (out of search; `exo restore` brings it back)."""
    _lifecycle(ctx, memory_id, "archive", "archived", as_json)


def restore(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="the memory's id")],
    as_json: Json = False,
) -> None:
    """Bring an archived memory back."""
    _lifecycle(ctx, memory_id, "restore", "restored", as_json)


def _lifecycle(ctx: typer.Context, memory_id: str, action: str, done: str, as_json: bool) -> None:
    with client(ctx) as api:
        memory = api.post(f"/api/memories/{memory_id}/{action}")
    if as_json:
        output.emit_json(memory)
    else:
        output.stdout.print(f"{done} [bold]{memory['id']}[/bold]")


def forget(
    ctx: typer.Context,
    memory_id: Annotated[str, typer.Argument(help="the memory's id")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="do not ask")] = False,
    as_json: Json = False,
) -> None:
    """Delete a memory for good, with its chunks and links (`exo archive` keeps it)."""
    if not yes and not typer.confirm(f"Delete {memory_id} permanently?"):
        raise typer.Exit(1)
    with client(ctx) as api:
        deleted = api.delete(f"/api/memories/{memory_id}")
    if as_json:
        output.emit_json(deleted)
    else:
        output.stdout.print(f"deleted [bold]{deleted['id']}[/bold]")


def recent(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option("--limit", "-l", help="1-100")] = 20,
    namespace: Namespace = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t", help="any of these")] = None,
    archived: Annotated[bool, typer.Option(help="list the archive instead")] = False,
    as_json: Json = False,
) -> None:
    """List the newest memories (or the archived ones)."""
    path = "/api/memories/archived" if archived else "/api/memories/recent"
    with client(ctx) as api:
        page = api.get(path, limit=limit, namespace=namespace, tags=tags)
    if as_json:
        output.emit_json(page)
        return
    # The type and tags when the terminal has room for them; the text always.
    wide = output.stdout.width >= WIDE
    columns = ["id", "created", *(["type", "tags"] if wide else []), "content"]
    rows = []
    for m in page["results"]:
        extra = [m["content_type"], ",".join(m["tags"])] if wide else []
        rows.append([m["id"], str(m["created_at"])[:10], *extra, output.preview(m["content"])])
    output.table(columns, rows)


def _json_object(raw: str | None, option: str) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not JSON ({exc.msg})", param_hint=option) from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint=option)
    return value
