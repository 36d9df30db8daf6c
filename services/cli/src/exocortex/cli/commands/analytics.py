"""``exo analytics <report>``: the usage analytics of /api/analytics/*, read-only, limited to
the namespaces the key may use. Each report prints a table, or its JSON with --json."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.context import ExoGroup, client

app = typer.Typer(
    cls=ExoGroup,
    help="Usage analytics: what is found, what is useful, what is missing.",
    no_args_is_help=True,
)

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
Namespace = Annotated[
    str | None,
    typer.Option("--namespace", "-n", help="one namespace (default: every one the key may use)"),
]
Limit = Annotated[int, typer.Option("--limit", "-l", help="at most this many rows")]


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _num(value: float) -> str:
    return f"{value:.2f}"


def _fetch(ctx: typer.Context, report: str, **params: Any) -> Any:
    with client(ctx) as api:
        return api.get(f"/api/analytics/{report}", **params)


def _show(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        output.emit_json(data)
    else:
        render(data)


@app.command()
def summary(ctx: typer.Context, namespace: Namespace = None, as_json: Json = False) -> None:
    """Active memories, the share never accessed, the share found useful, the median access."""

    def render(s: dict[str, Any]) -> None:
        output.fields(
            [
                ("active memories", s["totalActive"]),
                ("never accessed", _pct(s["neverAccessedPct"])),
                ("found useful", _pct(s["usefulPct"])),
                ("median accesses", s["medianAccessCount"]),
            ]
        )

    _show(_fetch(ctx, "summary", namespace=namespace), as_json, render)


@app.command("access-distribution")
def access_distribution(
    ctx: typer.Context, namespace: Namespace = None, as_json: Json = False
) -> None:
    """Memories per access-count bucket (0, 1-5, 6-20, 21-100, 100+)."""
    _show(
        _fetch(ctx, "access-distribution", namespace=namespace),
        as_json,
        lambda rows: output.table(
            ["accesses", "memories"], ((b["label"], b["count"]) for b in rows)
        ),
    )


@app.command("tag-effectiveness")
def tag_effectiveness(
    ctx: typer.Context, namespace: Namespace = None, limit: Limit = 20, as_json: Json = False
) -> None:
    """Tags on at least 3 memories, by how often their memories were found useful."""
    _show(
        _fetch(ctx, "tag-effectiveness", namespace=namespace, limit=limit),
        as_json,
        lambda rows: output.table(
            ["memories", "avg useful", "tag"],
            ((t["memoryCount"], _num(t["avgUsefulCount"]), t["tag"]) for t in rows),
        ),
    )


@app.command("tag-health")
def tag_health(ctx: typer.Context, namespace: Namespace = None, as_json: Json = False) -> None:
    """Tags in use, aliases, and spellings that are probably one tag."""

    def render(h: dict[str, Any]) -> None:
        output.fields(
            [
                ("tags", h["totalTags"]),
                ("probable duplicates", h["mergeCount"]),
                ("aliases", [f"{a} → {t}" for a, t in h["aliasMap"].items()]),
            ]
        )
        if h["suggestions"]:
            output.table(
                ["similarity", "uses", "uses ", "merge"],
                (
                    (
                        _num(m["similarity"]),
                        m["fromCount"],
                        m["toCount"],
                        f"{m['fromTag']} → {m['toTag']}",
                    )
                    for m in h["suggestions"]
                ),
                title="merge suggestions",
            )

    _show(_fetch(ctx, "tag-health", namespace=namespace), as_json, render)


@app.command("producer-quality")
def producer_quality(
    ctx: typer.Context,
    namespace: Namespace = None,
    by: Annotated[str, typer.Option(help="model or agent")] = "model",
    limit: Limit = 15,
    as_json: Json = False,
) -> None:
    """Models (or agents) with at least 3 memories, by how useful their memories turned out."""
    _show(
        _fetch(ctx, "producer-quality", namespace=namespace, by=by, limit=limit),
        as_json,
        lambda rows: output.table(
            ["memories", "avg useful", by],
            ((p["memoryCount"], _num(p["avgUsefulCount"]), p["producer"]) for p in rows),
        ),
    )


@app.command("quality-trend")
def quality_trend(
    ctx: typer.Context,
    namespace: Namespace = None,
    granularity: Annotated[str, typer.Option(help="month or week")] = "month",
    limit: Limit = 12,
    as_json: Json = False,
) -> None:
    """Per month (or week), oldest first: memories created, average useful, never accessed."""
    _show(
        _fetch(ctx, "quality-trend", namespace=namespace, granularity=granularity, limit=limit),
        as_json,
        lambda rows: output.table(
            ["period", "created", "avg useful", "never accessed"],
            (
                (p["period"], p["created"], _num(p["avgUseful"]), _pct(p["neverAccessedPct"]))
                for p in rows
            ),
        ),
    )


@app.command("quality-distribution")
def quality_distribution(
    ctx: typer.Context, namespace: Namespace = None, as_json: Json = False
) -> None:
    """The quality score of active memories: mean, median, p10, p90, high and low."""

    def render(q: dict[str, Any]) -> None:
        output.fields(
            [
                ("memories", q["total"]),
                ("mean", _num(q["avg"])),
                ("median", _num(q["median"])),
                ("p10", _num(q["p10"])),
                ("p90", _num(q["p90"])),
                ("≥ 0.5", q["highQuality"]),
                ("< 0.2", q["lowQuality"]),
            ]
        )

    _show(_fetch(ctx, "quality-distribution", namespace=namespace), as_json, render)


@app.command("embedding-health")
def embedding_health(
    ctx: typer.Context, namespace: Namespace = None, as_json: Json = False
) -> None:
    """Rows with an embedding, made by another model than the current one, or with none."""

    def render(e: dict[str, Any]) -> None:
        output.fields(
            [
                ("current model", e.get("currentModel")),
                ("dimensions", e.get("dimensions")),
                ("embedded", e["totalEmbedded"]),
                ("by another model", e["mismatchedModel"]),
                ("no embedding", e["missingEmbedding"]),
                ("models", [f"{m} {n}" for m, n in e["models"].items()]),
            ]
        )

    _show(_fetch(ctx, "embedding-health", namespace=namespace), as_json, render)


@app.command("decay-preview")
def decay_preview(ctx: typer.Context, namespace: Namespace = None, as_json: Json = False) -> None:
    """What the importance decay would lower now (the lowest in quality). Changes nothing."""

    def render(d: dict[str, Any]) -> None:
        output.table(
            ["id", "importance", "quality", "created", "content"],
            (
                (
                    c["id"],
                    _num(c["importance"]),
                    _num(c["quality"]),
                    str(c["createdAt"])[:10],
                    output.preview(c["content"]),
                )
                for c in d["candidates"]
            ),
            title=f"{d['total']} would decay (older than {d['decayAgeDays']} days)",
        )

    _show(_fetch(ctx, "decay-preview", namespace=namespace), as_json, render)


@app.command("search-misses")
def search_misses(
    ctx: typer.Context,
    namespace: Namespace = None,
    days: Annotated[int, typer.Option(help="the last this many days")] = 7,
    limit: Limit = 20,
    as_json: Json = False,
) -> None:
    """Searches that found nothing, one row per query, most asked first."""
    _show(
        _fetch(ctx, "search-misses", namespace=namespace, days=days, limit=limit),
        as_json,
        lambda rows: output.table(
            ["times", "last seen", "query"],
            ((m["count"], str(m["last_seen"])[:19], m["query"]) for m in rows),
        ),
    )


@app.command("knowledge-gaps")
def knowledge_gaps(
    ctx: typer.Context,
    namespace: Namespace = None,
    min_count: Annotated[int, typer.Option(help="topics missed at least this often")] = 3,
    days: Annotated[int, typer.Option(help="the last this many days")] = 14,
    limit: Limit = 20,
    as_json: Json = False,
) -> None:
    """Missed searches grouped into topics worth writing down, with their severity."""
    _show(
        _fetch(
            ctx, "knowledge-gaps", namespace=namespace, min_count=min_count, days=days, limit=limit
        ),
        as_json,
        lambda rows: output.table(
            ["topic", "severity", "misses", "queries"],
            ((g["topic"], g["severity"], g["count"], "; ".join(g["queries"])) for g in rows),
        ),
    )
