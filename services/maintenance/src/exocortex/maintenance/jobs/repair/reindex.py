"""The reindex job: retrieval owns the vector and keyword projections and their reconciler;
this asks it to compare both with Postgres now and repair only what differs (missing, stale or
orphaned documents). The runbook action for ExoIndexDrift (docs/operations.md)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Literal

from exocortex.maintenance.jobs.base import JobContext, Params, Report


class ReindexParams(Params):
    pass


class ReindexJob:
    name = "reindex"
    description = (
        "Rebuilds the vector and keyword projections from Postgres with minimal edits "
        "(retrieval's reconciler, on demand)."
    )
    scope: Literal["global"] = "global"
    schedule = ""
    params_model = ReindexParams

    async def run(self, ctx: JobContext, params: ReindexParams) -> Report:
        if ctx.dry_run:
            return {"dry_run": True, "note": "a reindex only writes what differs; nothing run"}
        await ctx.step("reconciling")
        result = await ctx.deps.retrieval_admin.reconcile()
        repaired = sum(result.repaired.values())
        return {"dry_run": False, **asdict(result), "changes": {"repaired": repaired}}
