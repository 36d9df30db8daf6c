"""Hybrid search from the terminal."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.context import client, csv


def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="what to look for")],
    limit: Annotated[int, typer.Option("--limit", "-l", help="1-100")] = 10,
    namespace: Annotated[str | None, typer.Option("--namespace", "-n")] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-t", help="comma-separated")] = None,
    content_type: Annotated[str | None, typer.Option("--type", help="a content type")] = None,
    source: Annotated[str | None, typer.Option(help="only from this source")] = None,
    after: Annotated[str | None, typer.Option(help="date or ISO date-time")] = None,
    before: Annotated[str | None, typer.Option(help="date or ISO date-time")] = None,
    min_importance: Annotated[float | None, typer.Option(help="0-1")] = None,
    min_score: Annotated[float | None, typer.Option(help="drop weaker results")] = None,
    include_metadata: Annotated[bool, typer.Option(help="include metadata memories")] = False,
    compact: Annotated[bool, typer.Option(help="ids and previews only")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="show the score breakdown")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for scripts")] = False,
) -> None:
    """Search memories (vector, keyword and graph signals fused)."""
    body: dict[str, Any] = {
        "query": query,
        "limit": limit,
        "tags": csv(tags),
        "include_metadata": include_metadata,
        "compact": compact,
    }
    optional = {
        "namespace": namespace,
        "content_type": content_type,
        "source": source,
        "after": after,
        "before": before,
        "min_importance": min_importance,
        "min_score": min_score,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    with client(ctx) as api:
        found = api.post("/api/memories/search", body)
    if as_json:
        output.emit_json(found)
        return
    if found.get("degraded"):
        output.note("partial results: " + ", ".join(found["degraded"]) + " unavailable")
    if not found["results"]:
        output.note("nothing found")
        return
    if compact:
        output.table(
            ["score", "id", "tags", "preview"],
            (
                (f"{r['score']:.3f}", r["id"], ",".join(r["tags"]), r["preview"])
                for r in found["results"]
            ),
        )
        return
    # The score breakdown, or the date and tags when the terminal has room for them.
    wide = output.stdout.width >= 110
    columns = ["score", "vec", "kw", "rec"] if verbose else ["score"]
    columns += [*(["created", "tags"] if wide and not verbose else []), "id", "content"]
    rows = []
    for r in found["results"]:
        m = r["memory"]
        row: list[Any] = [f"{r['score']:.3f}"]
        if verbose:
            b = r["score_breakdown"]
            row += [
                b.get("vector_rank") or "-",
                b.get("keyword_rank") or "-",
                f"{b['recency']:.2f}",
            ]
        elif wide:
            row += [str(m["created_at"])[:10], ",".join(m["tags"])]
        rows.append([*row, m["id"], output.preview(m["content"], 160)])
    output.table(columns, rows)
