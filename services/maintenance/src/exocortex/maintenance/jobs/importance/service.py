"""The importance job: decide per memory (``rules``), then apply every change of a namespace
in one transaction with its marks, events and audit rows."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import Field

from exocortex.maintenance.jobs import memory_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.importance import repository, rules
from exocortex.maintenance.jobs.importance.rules import Change
from exocortex.maintenance.jobs.settings import int_setting

MAX_DETAILS = 200
# The share of a namespace's entities (by degree) whose memories get the graph boost.
CENTRAL_SHARE = 0.10


class ImportanceParams(Params):
    # None: the importance.boost_threshold / importance.decay_age_days settings.
    boost_threshold: int | None = Field(default=None, ge=1, le=1_000_000)
    decay_age_days: int | None = Field(default=None, ge=1, le=36_500)
    graph_boost: bool = True


class ImportanceJob:
    name = "importance"
    description = (
        "Boosts used memories, decays unused ones, boosts memories of central entities once; "
        "pinned memories untouched; a second run in a row changes nothing."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "0 4 * * *"
    params_model = ImportanceParams

    async def run(self, ctx: JobContext, params: ImportanceParams) -> Report:
        settings = await ctx.deps.settings.get()
        if ctx.trigger != "api" and settings.get("importance.auto_adjust", "true") != "true":
            return {"dry_run": ctx.dry_run, "skipped": "importance.auto_adjust is false"}
        threshold = params.boost_threshold or int_setting(settings, "importance.boost_threshold", 5)
        age = params.decay_age_days or int_setting(settings, "importance.decay_age_days", 30)
        now = datetime.now(UTC)
        changes: list[Change] = []
        for i, namespace in enumerate(ctx.namespaces):
            async with ctx.deps.pool.connection() as conn:
                signals = await repository.signals(conn, namespace, CENTRAL_SHARE)
            found = [
                c
                for s in signals
                for c in rules.decide(
                    s,
                    boost_threshold=threshold,
                    decay_age_days=age,
                    graph=params.graph_boost,
                    now=now,
                )
            ]
            if found and not ctx.dry_run:
                found = await _apply(ctx, found, signals_by_id={s.id: s for s in signals})
            changes += found
            await ctx.step("adjusting", i + 1, len(ctx.namespaces))
        counts = {a: sum(1 for c in changes if c.action == a) for a in ("boost", "decay", "graph")}
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "boosted": counts["boost"],
            "decayed": counts["decay"],
            "graph_boosted": counts["graph"],
            "boost_threshold": threshold,
            "decay_age_days": age,
            "details": [_detail(c) for c in changes[:MAX_DETAILS]],
        }
        if not ctx.dry_run:
            report["changes"] = {
                "boosted": counts["boost"],
                "decayed": counts["decay"],
                "graph_boosted": counts["graph"],
            }
        return report


def _detail(change: Change) -> dict[str, Any]:
    return {
        "id": change.id,
        "action": change.action,
        "old_importance": change.old,
        "new_importance": change.new,
    }


async def _apply(
    ctx: JobContext, changes: list[Change], signals_by_id: dict[str, repository.Signals]
) -> list[Change]:
    """Writes the changes and their marks; returns those applied."""
    final: dict[str, float] = {}
    for change in changes:
        final[change.id] = change.new  # the last rule's value is the memory's new importance
    # Rules that cancel out (a decay and a graph boost of the same size) leave the value as it
    # was: nothing to write, but they were applied and are marked, or every later run would
    # apply them again.
    net_zero = {i for i, v in final.items() if v == signals_by_id[i].importance}
    async with ctx.deps.pool.connection() as conn, conn.transaction():
        written = await memory_repository.set_importance(
            conn,
            {i: v for i, v in final.items() if i not in net_zero},
            versions={i: signals_by_id[i].version for i in final},
            action="importance-adjusted",
            run_id=ctx.run_id,
        )
        # A memory changed since the read was skipped: it gets no mark, so the next run
        # decides again from its current importance.
        done = {c.memory_id for c in written} | net_zero
        applied = [c for c in changes if c.id in done]
        await repository.mark(
            conn,
            boosted=[
                (c.id, signals_by_id[c.id].access_count) for c in applied if c.action == "boost"
            ],
            decayed=[c.id for c in applied if c.action == "decay"],
            graph=[c.id for c in applied if c.action == "graph"],
        )
    return applied
