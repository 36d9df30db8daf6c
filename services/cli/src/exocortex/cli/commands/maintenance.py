"""Maintenance from the terminal: the job list, any job run with a progress bar polled from the
server, and the seed's shortcuts (consolidate, contradictions, retrieval-regression)."""

from __future__ import annotations

import json
import time
from typing import Annotated, Any

import typer

from exocortex.cli import output
from exocortex.cli.client import Client
from exocortex.cli.context import ExoGroup, client

app = typer.Typer(
    cls=ExoGroup, help="Maintenance jobs: list them, run one (--dry-run).", no_args_is_help=True
)

Json = Annotated[bool, typer.Option("--json", help="print JSON for scripts")]
Namespace = Annotated[str | None, typer.Option("--namespace", "-n", help="only this one")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="report what it would do; change nothing")]
# The server answers within this many seconds, or with 202 and a run to poll.
FIRST_WAIT_SECONDS = 1.0
POLL_SECONDS = 1.0


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="maintenance", rich_help_panel="Maintenance")
    for command in (
        consolidate,
        contradictions,
        retrieval_regression,
        backfill,
        reembed,
        reindex,
        trash,
    ):
        root.command(rich_help_panel="Maintenance")(command)


@app.command("list")
def list_jobs(ctx: typer.Context, as_json: Json = False) -> None:
    """Every job, its schedule and its last run."""
    with client(ctx) as api:
        jobs = api.get("/api/maintenance/jobs")
    if as_json:
        output.emit_json(jobs)
        return
    output.table(
        ["job", "schedule", "last run", "status", "description"],
        (
            (
                j["name"],
                j["schedule"] or "on demand",
                (j["last_run_at"] or "never")[:16],
                j["last_status"] or "",
                j["description"],
            )
            for j in jobs["jobs"]
        ),
    )


@app.command()
def runs(
    ctx: typer.Context,
    job: Annotated[str | None, typer.Option(help="only this job")] = None,
    as_json: Json = False,
) -> None:
    """Recent job runs, newest first."""
    with client(ctx) as api:
        found = api.get("/api/maintenance/jobs/runs", job=job)
    if as_json:
        output.emit_json(found)
        return
    output.table(
        ["run", "job", "status", "dry run", "started", "error"],
        (
            (r["id"], r["job"], r["status"], r["dry_run"], (r["started_at"] or "")[:19], r["error"])
            for r in found["runs"]
        ),
    )


@app.command()
def run(
    ctx: typer.Context,
    job: Annotated[str, typer.Argument(help="a job name (`exo maintenance list`)")],
    param: Annotated[
        list[str] | None, typer.Option("--param", "-p", help="KEY=VALUE (JSON values allowed)")
    ] = None,
    namespace: Namespace = None,
    dry_run: DryRun = False,
    as_json: Json = False,
) -> None:
    """Run a job now and follow its progress."""
    body = {"dry_run": dry_run, "params": _params(param or []), "namespace": namespace}
    with client(ctx) as api:
        finished = follow(api, f"/api/maintenance/jobs/{job}/run", body, job)
    show_run(finished, as_json)


def _params(pairs: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--param")
        try:
            params[key] = json.loads(raw)
        except json.JSONDecodeError:
            params[key] = raw
    return params


def follow(api: Client, path: str, body: dict[str, Any], label: str) -> dict[str, Any]:
    """Starts a job and, while the server says it is still running (202), polls its run with a
    progress bar (stage, done of total, rate, ETA) until it finishes."""
    body = {k: v for k, v in body.items() if v is not None}
    reply: dict[str, Any] = api.post(path, {**body, "wait_seconds": FIRST_WAIT_SECONDS})
    if reply.get("status") != "running":
        return reply
    with output.progress("items") as bar:
        task = bar.add_task(label, total=None)
        while reply.get("status") == "running":
            progress = reply.get("progress") or {}
            stage = progress.get("stage")
            bar.update(
                task,
                description=f"{label}: {stage}" if stage else label,
                completed=progress.get("done", 0),
                total=progress.get("total") or None,
            )
            time.sleep(POLL_SECONDS)
            reply = api.get(reply["poll"])
    return reply


def show_run(result: dict[str, Any], as_json: bool) -> None:
    """A finished run: its report as JSON, or as label/value lines."""
    if as_json:
        output.emit_json(result)
    else:
        report = result.get("report", result)
        if isinstance(report, dict):
            output.fields((k, _short(v)) for k, v in report.items())
        if result.get("error"):
            output.error(str(result["error"]))
    if result.get("status") == "failed" or result.get("error"):
        raise typer.Exit(1)


def _short(value: Any) -> Any:
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return f"{len(value)} items (--json shows them)"
    return value


def consolidate(
    ctx: typer.Context,
    apply: Annotated[
        bool, typer.Option("--apply", help="consolidate (default: only show the clusters)")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="only show the clusters (the default, said aloud)")
    ] = False,
    similarity: Annotated[float, typer.Option(help="0.5-1: how alike members must be")] = 0.75,
    min_size: Annotated[int, typer.Option(help="smallest cluster")] = 3,
    namespace: Namespace = None,
    history: Annotated[bool, typer.Option(help="list past consolidations instead")] = False,
    as_json: Json = False,
) -> None:
    """Find clusters of similar memories; --apply summarises each into one memory.

    The sources are archived, superseded by the summary, never deleted."""
    if apply and dry_run:
        raise typer.BadParameter("give --apply or --dry-run, not both", param_hint="--dry-run")
    with client(ctx) as api:
        if history:
            past = api.get("/api/consolidations", namespace=namespace)
            if as_json:
                output.emit_json(past)
                return
            output.table(
                ["created", "summary id", "merged", "strategy"],
                (
                    (c["created_at"][:16], c["summary_id"], c["memories_merged"], c["strategy"])
                    for c in past
                ),
            )
            return
        body = {
            "dry_run": not apply,
            "min_similarity": similarity,
            "min_cluster_size": min_size,
            "namespace": namespace,
        }
        result = follow(api, "/api/consolidate", body, "consolidation")
    show_run(result, as_json)


def contradictions(
    ctx: typer.Context,
    detect: Annotated[bool, typer.Option("--detect", help="look for new ones first")] = False,
    resolve: Annotated[str | None, typer.Option(help="resolve this contradiction id")] = None,
    keep: Annotated[
        str | None,
        typer.Option(help="with --resolve: the memory that stays (other: archived)"),
    ] = None,
    dismiss: Annotated[str | None, typer.Option(help="dismiss this contradiction id")] = None,
    status: Annotated[str, typer.Option(help="pending, resolved, dismissed or all")] = "pending",
    namespace: Namespace = None,
    as_json: Json = False,
) -> None:
    """List contradicting memories; --detect, --resolve ID [--keep MEMORY] or --dismiss ID."""
    with client(ctx) as api:
        if resolve or dismiss:
            change: dict[str, Any] = {"status": "resolved" if resolve else "dismissed"}
            if resolve:
                change["resolution"] = "resolved from the command line"
                if keep:
                    change["keep_id"] = keep
            updated = api.patch(f"/api/contradictions/{resolve or dismiss}", change)
            if as_json:
                output.emit_json(updated)
            else:
                output.stdout.print(f"{updated['status']} [bold]{updated['id']}[/bold]")
            return
        if detect:
            found = follow(
                api, "/api/contradictions/detect", {"namespace": namespace}, "contradictions"
            )
            if not as_json:
                show_run(found, False)
        listed = api.get("/api/contradictions", status=status, namespace=namespace)
    if as_json:
        output.emit_json(listed)
        return
    output.table(
        ["id", "status", "score", "memory a", "memory b"],
        (
            (
                c["id"],
                c["status"],
                f"{c['score']:.2f}" if c.get("score") is not None else "",
                output.preview(c["memory_a_preview"], 60),
                output.preview(c["memory_b_preview"], 60),
            )
            for c in listed
        ),
    )


def _pipe_list(value: str | None) -> list[str] | None:
    return None if value is None else [q.strip() for q in value.split("|") if q.strip()]


def retrieval_regression(
    ctx: typer.Context,
    run_now: Annotated[bool, typer.Option("--run", help="run the golden queries now")] = False,
    queries: Annotated[
        str | None, typer.Option(help='with --run: these queries instead, "a|b" (not kept)')
    ] = None,
    set_queries: Annotated[
        str | None,
        typer.Option(help='make these the golden queries, "a|b" (then run, unless --set-only)'),
    ] = None,
    set_only: Annotated[
        bool, typer.Option("--set-only", help="with --set-queries: store them, run nothing")
    ] = False,
    update_baselines: Annotated[
        bool, typer.Option("--update-baselines", help="run, and make the results the baselines")
    ] = False,
    reset_baselines: Annotated[
        bool, typer.Option("--reset-baselines", help="forget every baseline (next run sets them)")
    ] = False,
    reset_queries: Annotated[
        str | None, typer.Option(help='forget these queries\' baselines, "a|b"')
    ] = None,
    promote_run: Annotated[
        str | None, typer.Option(help="make a run's results the baselines: a run id or latest")
    ] = None,
    compare_against: Annotated[
        str | None,
        typer.Option(help="run, comparing with a past run (id or latest) instead of baselines"),
    ] = None,
    min_overlap: Annotated[
        float | None, typer.Option(help="alert below this overlap@k (0-1; default: setting)")
    ] = None,
    max_rank_shift: Annotated[
        float | None, typer.Option(help="alert above this mean rank shift (default: setting)")
    ] = None,
    fail_on_alert: Annotated[bool, typer.Option(help="exit 1 when a query drifted")] = False,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-l", help="results compared per query (default: setting, 10)"),
    ] = None,
    include_metadata: Annotated[
        bool, typer.Option("--include-metadata", help="search metadata memories too")
    ] = False,
    alerts_as_memory: Annotated[
        bool | None,
        typer.Option(
            "--alerts-as-memory/--no-alerts-as-memory",
            help="store a drift alert as a memory (default: setting)",
        ),
    ] = None,
    runs_listed: Annotated[int, typer.Option("--runs", help="how many past runs to list")] = 10,
    as_json: Json = False,
) -> None:
    """Whether search results for the golden queries drifted: the latest run, or run it now;
    set the golden queries and manage their baselines."""
    path = "/api/maintenance/jobs/retrieval-regression/run"
    params: dict[str, Any] = {}
    one_off = _pipe_list(queries)
    if one_off is not None:
        params["queries"] = one_off
    for key, value in (
        ("compare_against", compare_against),
        ("min_overlap", min_overlap),
        ("max_rank_shift", max_rank_shift),
        ("limit", limit),
        ("alerts_as_memory", alerts_as_memory),
        ("include_metadata", include_metadata or None),
    ):
        if value is not None:
            params[key] = value
    if update_baselines:
        params["update_baselines"] = True
    management: dict[str, Any] | None = None
    if reset_baselines:
        management = {"reset_baselines": True}
    elif reset_queries is not None:
        management = {"reset_queries": _pipe_list(reset_queries)}
    elif promote_run is not None:
        management = {"promote_run": promote_run}
    run_it = (
        run_now
        or update_baselines
        or compare_against is not None
        or (set_queries is not None and not set_only)
    )
    ran: dict[str, Any] | None = None
    with client(ctx) as api:
        if set_queries is not None:
            golden: list[Any] = _pipe_list(set_queries) or []
            if include_metadata:
                golden = [{"query": q, "include_metadata": True} for q in golden]
            api.patch("/api/settings", {"retrieval_regression.queries": json.dumps(golden)})
            if not as_json:
                output.stdout.print(f"{len(golden)} golden queries set")
        if management is not None:
            done = follow(api, path, {"params": management}, "baselines")
            if not as_json:
                show_run(done, False)
        if run_it:
            ran = follow(api, path, {"params": params}, "regression")
            if ran.get("status") == "failed":
                show_run(ran, as_json)
        latest = api.request("GET", "/api/retrieval-regression/latest", ok=(404,))
        history = api.get("/api/retrieval-regression/runs", limit=runs_listed)
    alerts = [r for r in (latest or {}).get("results", []) if r.get("alert")]
    if as_json:
        ran_report = (ran or {}).get("report")
        output.emit_json({"latest": latest, "runs": history["runs"], "run": ran_report})
    else:
        output.table(
            ["run", "created", "queries", "alerts", "avg overlap"],
            (
                (
                    r["run_id"],
                    str(r["created_at"])[:16],
                    r["query_count"],
                    r["alerts"],
                    r["avg_overlap"],
                )
                for r in history["runs"]
            ),
        )
        for alert in alerts:
            output.error(f"drifted: {alert['query']!r} (overlap@10 {alert['overlap_at_10']})")
    if fail_on_alert and alerts:
        raise typer.Exit(1)


def reembed(
    ctx: typer.Context,
    dry_run: DryRun = False,
    stale_model: Annotated[
        bool, typer.Option(help="also memories embedded by another model than the running one")
    ] = True,
    limit: Annotated[int, typer.Option(help="at most this many memories")] = 10_000,
    as_json: Json = False,
) -> None:
    """Embed memories that have no vector (and, by default, those made by another model)."""
    body = {"dry_run": dry_run, "stale_model": stale_model, "limit": limit}
    with client(ctx) as api:
        result = follow(api, "/api/reembed", body, "re-embedding")
    show_run(result, as_json)


def backfill(
    ctx: typer.Context,
    namespace: Namespace = None,
    dry_run: DryRun = False,
    limit: Annotated[int, typer.Option(help="at most this many memories a run")] = 1_000,
    as_json: Json = False,
) -> None:
    """Hand memories back to enrichment: unfinished ones, and unlinked ones with entities.

    Memories enrichment never finished (their event was lost), and memories linked to no entity
    in which the extractor now finds one, are enriched again: entities, relationships, links,
    keywords. A second run hands back nothing."""
    body = {"dry_run": dry_run, "params": {"limit": limit}, "namespace": namespace}
    with client(ctx) as api:
        finished = follow(api, "/api/maintenance/jobs/entity-backfill/run", body, "backfilling")
    show_run(finished, as_json)


def reindex(ctx: typer.Context, as_json: Json = False) -> None:
    """Rebuild the vector and keyword indexes from Postgres: what is missing is written again,
    what is stale rewritten, what should not be there removed (a second run repairs nothing)."""
    with client(ctx) as api:
        result = follow(api, "/api/maintenance/reindex", {}, "reindexing")
    show_run(result, as_json)


def trash(
    ctx: typer.Context,
    namespace: Namespace = None,
    purge: Annotated[
        bool,
        typer.Option(
            "--purge", help="delete for good what a person trashed trash.auto_purge_days ago"
        ),
    ] = False,
    empty: Annotated[
        bool,
        typer.Option(
            "--empty", help="empty the trash: everything in it, what automation archived too"
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="with --empty: do not ask")] = False,
    as_json: Json = False,
) -> None:
    """The trash, each memory with who put it there (person or automation) and when it goes.

    Only what a person trashed is purged on the clock (trash.auto_purge_days); what automation
    archived stays restorable until --empty. A memory superseded by an active one is kept."""
    if purge and empty:
        raise typer.BadParameter("give --purge or --empty, not both", param_hint="--empty")
    if empty and not yes and not typer.confirm("Delete everything in the trash for good?"):
        raise typer.Exit(1)
    params: dict[str, Any] = {"older_than_days": 0, "include_automation": True} if empty else {}
    body = {"dry_run": not (purge or empty), "params": params, "namespace": namespace}
    with client(ctx) as api:
        result = follow(api, "/api/maintenance/jobs/trash-purge/run", body, "trash")
    report = result.get("report") or {}
    if as_json or result.get("status") == "failed":
        show_run(result, as_json)
        return
    output.table(
        ["archived", "by", "goes", "id", "memory"],
        (
            (
                i["archived_at"][:16],
                i["archived_by"],
                "purged"
                if i["purged"] and not report.get("dry_run")
                else (i["purge_after"] or "")[:10] or "kept",
                i["id"],
                output.preview(i["content"], 50),
            )
            for i in report.get("items", [])
        ),
    )
    counts = report.get("trash") or {}
    done = "would go" if report.get("dry_run") else "deleted"
    output.stdout.print(
        f"{counts.get('person', 0)} trashed by a person, {counts.get('automation', 0)} archived by "
        f"automation; {report.get('purged', 0)} {done}"
        if "trash" in report
        else str(report.get("skipped", ""))
    )
