"""Maintenance tools: run jobs with the health checks, consolidate, contradictions, tag cleanup,
the decay preview and the entity graph. Each calls the REST routes of docs/maintenance.md."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from exocortex.api.limits import (
    CLUSTER_SIZE_MAX,
    CLUSTER_SIZE_MIN,
    CONSOLIDATION_SIMILARITY_MIN,
    COUNT_MAX,
    MAINTENANCE_WAIT_MAX,
    TAG_SIMILARITY_MAX,
    TAG_SIMILARITY_MIN,
)
from exocortex.api.vocabulary import ContradictionStatus, TimeBucket
from exocortex.mcp.common import Api, result
from exocortex.mcp.models import HealthCheck, Out
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult

JobName = Literal[
    "importance",
    "archival",
    "consolidation",
    "auto-consolidation",
    "contradictions",
    "tags",
    "graph",
    "entity-backfill",
    "repair",
    "retrieval-regression",
    "weights",
    "recalibration",
    "trash-purge",
    "sentinel-expiry",
]
# A tool call waits this long for a job (never longer than REST allows); a longer run is
# reported as running, with its id.
WAIT_SECONDS = min(60.0, MAINTENANCE_WAIT_MAX)
# Lists shown to a model are kept shorter than REST allows: each item is a line of its context.
LIST_MAX = 100


class JobResult(Out):
    job: str
    status: str
    run_id: int
    report: dict[str, Any] | None = None
    error: str | None = None


class QualityDistribution(Out):
    avg: float
    median: float
    p10: float
    p90: float
    high_quality: int
    low_quality: int
    total: int


class SearchFriction(Out):
    query: str
    count: int
    avg_max_score: float


class DanglingEntity(Out):
    id: str
    name: str
    type: str
    memory_count: int


class MaintenanceOutput(Out):
    runs: list[JobResult]
    overall: str
    checks: list[HealthCheck]
    quality_distribution: QualityDistribution
    # The most asked searches that found nothing in the last FRICTION_DAYS days.
    search_friction: list[SearchFriction]
    # Entities that at most one active memory names: candidates to merge, or noise.
    dangling_entities: list[DanglingEntity]


def _summary(report: dict[str, Any] | None) -> str:
    if not report:
        return ""
    changes = report.get("changes") or {}
    if report.get("skipped"):
        return f"skipped: {report['skipped']}"
    if report.get("dry_run"):
        keys = (
            "clusters_found",
            "total",
            "detected",
            "boosted",
            "decayed",
            "to_embed",
            "recalibrated",
            "purged",
            "expiring",
        )
        return "dry run: " + ", ".join(f"{k} {report[k]}" for k in keys if k in report)
    return ", ".join(f"{k} {v}" for k, v in changes.items()) or "no changes"


# The original's flags (docs/maintenance.md), each the job of this product that does its work
# (with the parameters that make it do just that). `reembed` embeds rows that have no vector;
# `reembed_all` also re-embeds rows another model embedded, at most `reembed_all_limit` of them.
FLAG_JOBS: dict[str, tuple[JobName, dict[str, Any]]] = {
    "reembed": ("repair", {"reembed": True, "stale_model": False, "prune_outbox_days": 0}),
    "backfill_entities": ("entity-backfill", {}),
    "recalibrate": ("recalibration", {}),
    "densify_graph": ("graph", {}),
    "build_co_retrieval_links": ("graph", {}),
    "tune_weights": ("weights", {}),
}
REEMBED_ALL_LIMIT = 100
# The report's lists, as the original gives them: the top 10 misses of the last 7 days, and 10
# entities with at most one active memory.
FRICTION_DAYS = 7
REPORT_TOP = 10


def planned_jobs(
    run: list[JobName], flags: dict[str, bool], reembed_all: bool, reembed_all_limit: int
) -> dict[str, dict[str, Any]]:
    """Job name -> parameters, in order: the `run` list, then each flag's job (once)."""
    plan: dict[str, dict[str, Any]] = {job: {} for job in run}
    for flag, (job, params) in FLAG_JOBS.items():
        if flags.get(flag):
            plan[job] = {**plan.get(job, {}), **params}
    if reembed_all:
        plan["repair"] = {
            "reembed": True,
            "stale_model": True,
            "limit": reembed_all_limit,
            "prune_outbox_days": 0,
        }
    return plan


async def memory_maintenance(
    ctx: Context,
    run: Annotated[list[JobName], Field(max_length=10)] = ["importance", "archival"],  # noqa: B006
    dry_run: bool = False,
    namespace: str | None = None,
    reembed: bool = False,
    backfill_entities: bool = False,
    recalibrate: bool = False,
    densify_graph: bool = False,
    build_co_retrieval_links: bool = False,
    tune_weights: bool = False,
    reembed_all: bool = False,
    reembed_all_limit: Annotated[int, Field(ge=1, le=COUNT_MAX)] = REEMBED_ALL_LIMIT,
) -> Annotated[CallToolResult, MaintenanceOutput]:
    """Run maintenance jobs (default importance + archival; each flag adds its job) and report
    the 8 health checks."""
    api = Api(ctx)
    flags = {
        "reembed": reembed,
        "backfill_entities": backfill_entities,
        "recalibrate": recalibrate,
        "densify_graph": densify_graph,
        "build_co_retrieval_links": build_co_retrieval_links,
        "tune_weights": tune_weights,
    }
    runs = []
    for job, params in planned_jobs(run, flags, reembed_all, reembed_all_limit).items():
        raw = await api.call(
            "POST",
            f"/api/maintenance/jobs/{job}/run",
            json={
                "dry_run": dry_run,
                "namespace": namespace,
                "params": params,
                "wait_seconds": WAIT_SECONDS,
            },
        )
        runs.append(
            JobResult(
                job=job,
                status=raw["status"],
                run_id=raw["id"],
                report=raw.get("report"),
                error=raw.get("error"),
            )
        )
    scope = {"namespace": namespace}
    health = await api.call("GET", "/api/maintenance/health", params=scope)
    quality = await api.call("GET", "/api/analytics/quality-distribution", params=scope)
    misses = await api.call(
        "GET",
        "/api/analytics/search-misses",
        params={**scope, "days": FRICTION_DAYS, "limit": REPORT_TOP},
    )
    dangling = await api.call(
        "GET", "/api/entities", params={**scope, "max_memories": 1, "limit": REPORT_TOP}
    )
    out = MaintenanceOutput(
        runs=runs,
        overall=health["overall"],
        checks=[HealthCheck.model_validate(c) for c in health["checks"]],
        # REST names the fields in camelCase; the tool's output is in snake_case.
        quality_distribution=QualityDistribution.model_validate(
            {
                **quality,
                "high_quality": quality["highQuality"],
                "low_quality": quality["lowQuality"],
            }
        ),
        search_friction=[SearchFriction.model_validate(m) for m in misses],
        dangling_entities=[DanglingEntity.model_validate(e) for e in dangling["results"]],
    )
    lines = [f"Maintenance{' (dry run)' if dry_run else ''}:"]
    for r in out.runs:
        detail = r.error or _summary(r.report) or f"still running (run {r.run_id})"
        lines.append(f"- {r.job}: {r.status}; {detail}")
    lines.append(f"Health: {out.overall}")
    for c in out.checks:
        tip = f" → {c.suggestion}" if c.status != "ok" else ""
        lines.append(f"- {c.name}: {c.status} ({c.detail}){tip}")
    lines.extend(_report_sections(out))
    return result("\n".join(lines), out)


def _report_sections(out: MaintenanceOutput) -> list[str]:
    q = out.quality_distribution
    lines = [
        f"Quality distribution ({q.total} active): mean {q.avg:.2f}, median {q.median:.2f}, "
        f"p10 {q.p10:.2f}, p90 {q.p90:.2f}; {q.high_quality} at 0.5 or more, "
        f"{q.low_quality} below 0.2",
        f"Search friction (searches that found nothing, last {FRICTION_DAYS} days):",
    ]
    lines += [f"- {m.query!r}: {m.count}×" for m in out.search_friction] or ["- none"]
    lines.append("Dangling entities (at most one active memory names them):")
    lines += [
        f"- {e.name} ({e.type}): {e.memory_count} memories" for e in out.dangling_entities
    ] or ["- none"]
    return lines


class Cluster(Out):
    topic: str
    size: int
    avg_similarity: float
    memory_ids: list[str]
    summary_id: str | None = None


class ConsolidateOutput(Out):
    dry_run: bool
    clusters_found: int
    clusters: list[Cluster]
    run_id: int


async def memory_consolidate(
    ctx: Context,
    dry_run: bool = True,
    min_similarity: Annotated[float, Field(ge=CONSOLIDATION_SIMILARITY_MIN, le=1.0)] = 0.75,
    min_cluster_size: Annotated[int, Field(ge=CLUSTER_SIZE_MIN, le=CLUSTER_SIZE_MAX)] = 3,
    time_bucket: TimeBucket | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, ConsolidateOutput]:
    """Find clusters of similar memories (dry run) or merge each into a summary memory."""
    raw = await Api(ctx).call(
        "POST",
        "/api/consolidate",
        json={
            "dry_run": dry_run,
            "min_similarity": min_similarity,
            "min_cluster_size": min_cluster_size,
            "time_bucket": time_bucket,
            "namespace": namespace,
            "wait_seconds": WAIT_SECONDS,
        },
    )
    if "clusters_found" not in raw:
        raise ToolError(f"consolidation still running or failed: {raw.get('error') or raw}")
    items = raw.get("clusters") if dry_run else raw.get("consolidated")
    clusters = [Cluster.model_validate(c) for c in items or []]
    out = ConsolidateOutput(
        dry_run=dry_run,
        clusters_found=raw["clusters_found"],
        clusters=clusters,
        run_id=raw["run_id"],
    )
    verb = "would merge" if dry_run else "merged"
    lines = [f"{out.clusters_found} clusters ({'dry run' if dry_run else 'consolidated'}):"]
    for c in clusters:
        into = f" into {c.summary_id}" if c.summary_id else ""
        lines.append(f"- {verb} {c.size} memories{into}: {c.topic}")
    if dry_run and clusters:
        lines.append(
            "Run again with dry_run=false to consolidate (sources are archived, not lost)."
        )
    return result("\n".join(lines), out)


class Contradiction(Out):
    id: str
    memory_a_id: str
    memory_b_id: str
    memory_a_preview: str
    memory_b_preview: str
    description: str
    status: str
    resolution: str | None = None


class ContradictionsOutput(Out):
    contradictions: list[Contradiction]
    detected: int | None = None


async def memory_contradictions(
    ctx: Context,
    status: Literal[ContradictionStatus, "all"] = "pending",
    limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = 10,
    detect: Annotated[bool, Field(description="scan the namespace for new ones first")] = False,
    resolve_id: str | None = None,
    resolve_status: Literal["resolved", "dismissed"] = "resolved",
    keep_id: Annotated[str | None, Field(description="resolving: the side that stays")] = None,
    resolution: str | None = None,
    namespace: str | None = None,
) -> Annotated[CallToolResult, ContradictionsOutput]:
    """List contradictions between memories, detect new ones, or resolve/dismiss one."""
    api = Api(ctx)
    if resolve_id:
        raw = await api.call(
            "PATCH",
            f"/api/contradictions/{resolve_id}",
            json={"status": resolve_status, "keep_id": keep_id, "resolution": resolution},
        )
        item = Contradiction.model_validate(raw)
        out = ContradictionsOutput(contradictions=[item])
        kept = f"; kept {keep_id}" if keep_id else ""
        return result(f"Contradiction {item.id} is now {item.status}{kept}.", out)
    detected = None
    if detect:
        found = await api.call(
            "POST",
            "/api/contradictions/detect",
            json={"namespace": namespace, "wait_seconds": WAIT_SECONDS},
        )
        detected = int(found.get("detected", 0))
    raw_list = await api.call(
        "GET",
        "/api/contradictions",
        params={"status": status, "limit": limit, "namespace": namespace},
    )
    items = [Contradiction.model_validate(c) for c in raw_list]
    out = ContradictionsOutput(contradictions=items, detected=detected)
    lines = [] if detected is None else [f"Detected {detected} new."]
    lines.append(f"{len(items)} {status} contradictions:")
    for c in items:
        lines.append(
            f"- [{c.id}] A {c.memory_a_id}: {c.memory_a_preview[:100]!r} | "
            f"B {c.memory_b_id}: {c.memory_b_preview[:100]!r} ({c.description[:120]})"
        )
    return result("\n".join(lines), out)


class TagSuggestion(Out):
    from_tag: str
    to_tag: str
    similarity: float
    from_count: int
    to_count: int


class TagCleanupOutput(Out):
    suggestions: list[TagSuggestion]
    merged: list[TagSuggestion]


async def memory_tag_cleanup(
    ctx: Context,
    min_similarity: Annotated[float, Field(ge=TAG_SIMILARITY_MIN, le=TAG_SIMILARITY_MAX)] = 0.8,
    limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = 20,
    apply: bool = False,
    from_tag: str | None = None,
    to_tag: str | None = None,
) -> Annotated[CallToolResult, TagCleanupOutput]:
    """Suggest near-duplicate tags; apply merges a given pair or the top suggestion."""
    api = Api(ctx)
    body: dict[str, Any] = {"min_similarity": min_similarity, "limit": limit}
    preview = await api.call("POST", "/api/maintenance/tags/merge", json={**body, "dry_run": True})
    suggestions = [TagSuggestion.model_validate(s) for s in preview.get("suggestions") or []]
    merged: list[TagSuggestion] = []
    if apply:
        pair = (from_tag, to_tag) if from_tag and to_tag else None
        if pair is None and suggestions:
            pair = (suggestions[0].from_tag, suggestions[0].to_tag)
        if pair is None:
            raise ToolError("nothing to merge: give from_tag and to_tag, or no suggestion exists")
        raw = await api.call(
            "POST",
            "/api/maintenance/tags/merge",
            json={**body, "from_tag": pair[0], "to_tag": pair[1]},
        )
        merged = [
            TagSuggestion.model_validate({**m, "similarity": m.get("similarity", 0.0)})
            for m in raw.get("merges") or []
        ]
    out = TagCleanupOutput(suggestions=suggestions, merged=merged)
    lines = [f"Merged {m.from_tag} → {m.to_tag}" for m in merged]
    lines.append(f"{len(suggestions)} suggestions:")
    lines += [
        f"- {s.from_tag} ({s.from_count}) → {s.to_tag} ({s.to_count}), similarity {s.similarity}"
        for s in suggestions
    ]
    return result("\n".join(lines), out)


class DecayCandidate(Out):
    id: str
    content: str
    reason: str
    importance: float
    access_count: int
    created_at: str


class DecayPreviewOutput(Out):
    total: int
    by_reason: dict[str, int]
    candidates: list[DecayCandidate]


async def memory_decay_preview(
    ctx: Context, namespace: str | None = None
) -> Annotated[CallToolResult, DecayPreviewOutput]:
    """What archival would archive now (stale, abandoned, expired) and why. Changes nothing."""
    raw = await Api(ctx).call("GET", "/api/archive/preview", params={"namespace": namespace})
    if "candidates" not in raw:
        raise ToolError(f"the preview did not finish: {raw.get('error') or raw}")
    out = DecayPreviewOutput(
        total=raw["total"],
        by_reason=raw.get("by_reason") or {},
        candidates=[DecayCandidate.model_validate(c) for c in raw["candidates"]],
    )
    lines = [f"{out.total} memories would be archived {out.by_reason}:"]
    lines += [
        f"- [{c.id}] {c.reason}: {c.content[:100]!r} (importance {c.importance}, "
        f"{c.access_count} accesses, created {c.created_at[:10]})"
        for c in out.candidates
    ]
    return result("\n".join(lines), out)


class GraphOutput(Out):
    action: str
    stats: dict[str, Any]
    items: list[dict[str, Any]]


async def memory_graph(
    ctx: Context,
    action: Literal["stats", "centrality", "bridges", "communities"],
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    namespace: str | None = None,
) -> Annotated[CallToolResult, GraphOutput]:
    """Entity graph analysis: stats, central entities, bridges, or communities."""
    raw = await Api(ctx).call(
        "GET", "/api/entities/graph/analysis", params={"limit": limit, "namespace": namespace}
    )
    stats = raw.get("stats") or {}
    items: list[dict[str, Any]] = [] if action == "stats" else list(raw.get(action) or [])
    out = GraphOutput(action=action, stats=stats, items=items)
    lines = [
        f"Graph: {stats.get('nodes', 0)} entities, {stats.get('edges', 0)} edges, "
        f"{stats.get('components', 0)} components, average degree {stats.get('avg_degree', 0)}"
    ]
    if action in ("centrality", "bridges"):
        lines += [
            f"- {i['name']} ({i['type']}): betweenness {i['betweenness']}, degree {i['degree']}"
            for i in items
        ]
    elif action == "communities":
        lines += [
            f"- community {c['id']} ({c['size']}): "
            + ", ".join(m["name"] for m in c["members"][:10])
            for c in items
        ]
    return result("\n".join(lines), out)


def register(server: MCPServer) -> None:
    for tool in (
        memory_maintenance,
        memory_consolidate,
        memory_contradictions,
        memory_tag_cleanup,
        memory_decay_preview,
        memory_graph,
    ):
        server.add_tool(tool)
