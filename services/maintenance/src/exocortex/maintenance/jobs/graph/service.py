"""The graph job, per namespace:

* co-retrieval links: memories returned together (top 10 of a search) at least 3 times since
  the last run become ``related`` (or an existing link is strengthened by 0.05, cap 0.9). Only
  co-retrievals recorded since the last run count (a watermark in the run's report), so a
  second run strengthens nothing (the seed re-counted the same 30 days every night);
* co-retrieval rows older than 60 days are dropped (a log, not memories);
* densify: entity pairs mentioned together by at least 2 active memories get ``co_occurs``;
* orphan pruning: extracted entities whose every mention is archived (hand-made and curated
  ones are spared; the seed deleted every entity with fewer than 2 links).
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Literal

from pydantic import Field

from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.graph import repository


class GraphParams(Params):
    co_retrieval_days: int = Field(default=30, ge=1, le=365)
    min_co_retrievals: int = Field(default=3, ge=1, le=1000)
    max_pairs: int = Field(default=200, ge=1, le=10_000)
    keep_co_retrieval_days: int = Field(default=60, ge=1, le=3650)
    min_shared: int = Field(default=2, ge=1, le=100)
    densify_limit: int = Field(default=500, ge=0, le=100_000)
    prune_orphans: bool = True


class GraphJob:
    name = "graph"
    description = (
        "Links memories retrieved together, densifies co_occurs between entities mentioned "
        "together, drops old co-retrieval rows and prunes extracted entities left orphaned."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "30 5 * * *"
    params_model = GraphParams

    async def run(self, ctx: JobContext, params: GraphParams) -> Report:
        totals: Counter[str] = Counter()
        watermarks: dict[str, int] = {}
        for i, namespace in enumerate(ctx.namespaces):
            async with ctx.deps.pool.connection() as conn, conn.transaction():
                after = await repository.last_watermark(conn, namespace)
                lists, newest = await repository.co_retrievals(
                    conn, namespace, after, params.co_retrieval_days
                )
                watermarks[namespace] = newest
                pairs: Counter[tuple[str, str]] = Counter()
                for ids in lists:
                    for a, b in combinations(sorted(set(ids)), 2):
                        pairs[(a, b)] += 1
                frequent = [
                    (a, b, n)
                    for (a, b), n in pairs.most_common(params.max_pairs)
                    if n >= params.min_co_retrievals
                ]
                totals["co_retrieval_pairs"] += len(frequent)
                if not ctx.dry_run:
                    created, strengthened = await repository.upsert_related(conn, frequent, 0.05)
                    totals["links_created"] += created
                    totals["links_strengthened"] += strengthened
                    totals["co_retrievals_pruned"] += await repository.prune_co_retrievals(
                        conn, namespace, params.keep_co_retrieval_days
                    )
                if params.densify_limit:
                    totals["co_occurs"] += await repository.densify(
                        conn, namespace, params.min_shared, params.densify_limit, ctx.dry_run
                    )
                if params.prune_orphans:
                    totals["orphans_pruned"] += len(
                        await repository.prune_orphans(conn, namespace, ctx.dry_run)
                    )
            await ctx.step("graph", i + 1, len(ctx.namespaces))
        report: Report = {"dry_run": ctx.dry_run, "namespaces": ctx.namespaces, **totals}
        if not ctx.dry_run:
            report["watermarks"] = watermarks
            report["changes"] = {
                k: v
                for k, v in totals.items()
                if k in ("links_created", "links_strengthened", "co_occurs", "orphans_pruned")
            }
        return report
