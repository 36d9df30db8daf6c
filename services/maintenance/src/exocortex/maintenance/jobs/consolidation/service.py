"""Finds clusters over a whole namespace and consolidates them.

Clusters: every candidate's nearest neighbours come from retrieval's vector index (the whole
namespace, not a window of recent rows). Seeds are taken newest first; a seed gathers every
unassigned candidate at least ``min_similarity`` from it (the seed's greedy pass, with the
index in place of the O(n²) scan). Consolidating stores the summary through ingest (embedded and
indexed like any memory), then in one transaction archives the sources with
``superseded_by`` / ``consolidated_into`` pointing at it, links the summary to each source
(``derived_from``), records the consolidation and an audit row per source. Sources stay
readable by id and in the trash; restoring one clears its supersession.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from exocortex.core.domain.vectors import from_bytes
from exocortex.maintenance.jobs import memory_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.consolidation import repository
from exocortex.maintenance.jobs.consolidation.repository import Candidate
from exocortex.maintenance.jobs.consolidation.summary import Source, basic_summary, summary_tags

# Vectors per Nearest call (retrieval accepts up to 512).
NEAREST_BATCH = 256
SUMMARY_IMPORTANCE = 0.8


class ConsolidateParams(Params):
    min_similarity: float = Field(default=0.75, ge=0.5, le=1.0)
    min_cluster_size: int = Field(default=3, ge=2, le=100)
    # 0: every cluster found.
    max_clusters: int = Field(default=0, ge=0, le=10_000)
    # Neighbours read per seed: a cluster never has more members than this plus one.
    max_cluster_size: int = Field(default=25, ge=2, le=200)
    time_bucket: Literal["week", "month"] | None = None


@dataclass
class Cluster:
    seed: Candidate
    members: list[tuple[Candidate, float]]

    @property
    def sources(self) -> list[Candidate]:
        return [self.seed, *(m for m, _ in self.members)]

    @property
    def avg_similarity(self) -> float:
        return sum(s for _, s in self.members) / len(self.members) if self.members else 1.0

    def describe(self) -> dict[str, Any]:
        return {
            "topic": self.seed.content[:80],
            "size": len(self.members) + 1,
            "avg_similarity": round(self.avg_similarity, 4),
            "memory_ids": [c.id for c in self.sources],
        }


def _bucket(candidate: Candidate, kind: str | None) -> str:
    if kind is None:
        return ""
    at = candidate.created_at
    return at.strftime("%Y-W%W") if kind == "week" else at.strftime("%Y-%m")


async def find_clusters(
    ctx: JobContext, namespace: str, params: ConsolidateParams
) -> tuple[list[Cluster], int]:
    """Clusters of a namespace (largest budget first: seeds newest first), and how many
    candidates were looked at."""
    async with ctx.deps.pool.connection() as conn:
        candidates = await repository.candidates(conn, namespace)
    by_id = {c.id: c for c in candidates}
    neighbours: dict[str, list[tuple[str, float]]] = {}
    for start in range(0, len(candidates), NEAREST_BATCH):
        batch = candidates[start : start + NEAREST_BATCH]
        results = await ctx.deps.retrieval.nearest(
            [from_bytes(c.embedding) for c in batch],
            namespace=namespace,
            limit=params.max_cluster_size,
            min_similarity=params.min_similarity,
            exclude_ids=[[c.id] for c in batch],
            roots_only=True,
            exclude_metadata=True,
            background=True,  # yields to searches (see retrieval's priority)
        )
        for candidate, hits in zip(batch, results, strict=True):
            neighbours[candidate.id] = [(h.root_id, h.similarity) for h in hits]
        await ctx.step(f"neighbours of {namespace}", start + len(batch), len(candidates))

    assigned: set[str] = set()
    clusters: list[Cluster] = []
    for seed in candidates:
        if seed.id in assigned:
            continue
        bucket = _bucket(seed, params.time_bucket)
        members: list[tuple[Candidate, float]] = []
        for other_id, similarity in neighbours.get(seed.id, []):
            other = by_id.get(other_id)
            if (
                other is None
                or other_id in assigned
                or other_id == seed.id
                or any(m.id == other_id for m, _ in members)
                or _bucket(other, params.time_bucket) != bucket
            ):
                continue
            members.append((other, similarity))
        if len(members) + 1 >= params.min_cluster_size:
            clusters.append(Cluster(seed, members))
            assigned.add(seed.id)
            assigned.update(m.id for m, _ in members)
            if params.max_clusters and len(clusters) >= params.max_clusters:
                break
    return clusters, len(candidates)


async def consolidate(
    ctx: JobContext, namespace: str, cluster: Cluster, strategy: str
) -> dict[str, Any]:
    sources = [Source(c.id, c.content, c.created_at, tuple(c.tags)) for c in cluster.sources]
    stored = await ctx.deps.ingest.store(
        namespace=namespace,
        content=basic_summary(sources),
        content_type="summary",
        source=repository.SUMMARY_SOURCE,
        importance=SUMMARY_IMPORTANCE,
        tags=summary_tags(sources),
        metadata={
            "strategy": strategy,
            "source_count": len(sources),
            "source_ids": [s.id for s in sources],
        },
    )
    source_ids = [s.id for s in sources if s.id != stored.memory_id]
    async with ctx.deps.pool.connection() as conn, conn.transaction():
        archived = await memory_repository.archive(
            conn,
            source_ids,
            action="consolidated",
            run_id=ctx.run_id,
            superseded_by=stored.memory_id,
            consolidated_into=stored.memory_id,
            versions={c.id: c.version for c in cluster.sources},
        )
        merged = [a.memory_id for a in archived]
        consolidation_id = await repository.record(
            conn,
            namespace=namespace,
            summary_id=stored.memory_id,
            source_ids=merged,
            strategy=strategy,
        )
    return {
        **cluster.describe(),
        "consolidation_id": consolidation_id,
        "summary_id": stored.memory_id,
        "summary_dedup": stored.dedup_action,
        "members": merged,
    }


class ConsolidationJob:
    name = "consolidation"
    description = (
        "Clusters of similar active memories (whole namespace, via the vector index) become a "
        "summary memory; the sources are superseded by it (archived, never deleted)."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "0 2 * * *"
    params_model = ConsolidateParams
    strategy = "basic"

    async def run(self, ctx: JobContext, params: ConsolidateParams) -> Report:
        return await self.consolidate_all(ctx, params)

    async def consolidate_all(self, ctx: JobContext, params: ConsolidateParams) -> Report:
        found: list[dict[str, Any]] = []
        done: list[dict[str, Any]] = []
        examined = 0
        for namespace in ctx.namespaces:
            clusters, seen = await find_clusters(ctx, namespace, params)
            examined += seen
            if params.max_clusters:
                clusters = clusters[: max(0, params.max_clusters - len(found))]
            found += [{"namespace": namespace, **c.describe()} for c in clusters]
            if ctx.dry_run:
                continue
            for i, cluster in enumerate(clusters):
                await ctx.step(f"consolidating {namespace}", i, len(clusters))
                result = await consolidate(ctx, namespace, cluster, self.strategy)
                done.append({"namespace": namespace, **result})
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "examined": examined,
            "clusters_found": len(found),
        }
        if ctx.dry_run:
            report["clusters"] = found
        else:
            report["consolidated"] = done
            report["changes"] = {
                "summaries": len({d["summary_id"] for d in done}),
                "superseded": sum(len(d["members"]) for d in done),
            }
        return report


class AutoConsolidateParams(Params):
    min_similarity: float = Field(default=0.85, ge=0.5, le=1.0)
    min_cluster_size: int = Field(default=3, ge=2, le=100)
    max_clusters: int = Field(default=5, ge=1, le=100)


class AutoConsolidationJob:
    name = "auto-consolidation"
    description = (
        "Consolidation with a stricter threshold (0.85) and a few clusters a run (5); off when "
        "the consolidation.auto_enabled setting is false."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "30 2 * * *"
    params_model = AutoConsolidateParams

    async def run(self, ctx: JobContext, params: AutoConsolidateParams) -> Report:
        settings = await ctx.deps.settings.get()
        if ctx.trigger != "api" and settings.get("consolidation.auto_enabled", "true") != "true":
            return {"dry_run": ctx.dry_run, "skipped": "consolidation.auto_enabled is false"}
        full = ConsolidateParams(
            min_similarity=params.min_similarity,
            min_cluster_size=params.min_cluster_size,
            max_clusters=params.max_clusters,
        )
        job = ConsolidationJob()
        job.strategy = "auto"
        return await job.consolidate_all(ctx, full)
