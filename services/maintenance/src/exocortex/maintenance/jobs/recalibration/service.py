"""Importance recalibration: the namespace's active, non-pinned importances are ranked and
mapped linearly onto 0.10..0.90, so a collapsed or crept distribution is spread again while the
order is kept. Ties keep one value. On demand only (REST, `memory_maintenance recalibrate`)."""

from __future__ import annotations

import statistics
from typing import Any, Literal

from exocortex.maintenance.jobs import memory_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.recalibration import repository

LOW, HIGH = 0.10, 0.90
MAX_DETAILS = 100


class RecalibrationParams(Params):
    pass


def recalibrated(importances: dict[str, float]) -> dict[str, float]:
    """Each id's new importance: its value's rank among the distinct values, mapped onto
    LOW..HIGH (a single distinct value maps to the middle)."""
    distinct = sorted(set(importances.values()))
    if len(distinct) == 1:
        return dict.fromkeys(importances, round((LOW + HIGH) / 2, 4))
    step = (HIGH - LOW) / (len(distinct) - 1)
    rank = {value: round(LOW + i * step, 4) for i, value in enumerate(distinct)}
    return {memory_id: rank[value] for memory_id, value in importances.items()}


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return {
        "mean": round(statistics.fmean(values), 4),
        "std": round(statistics.pstdev(values), 4),
        "min": min(values),
        "p25": round(q[0], 4),
        "median": round(q[1], 4),
        "p75": round(q[2], 4),
        "max": max(values),
    }


class RecalibrationJob:
    name = "recalibration"
    description = (
        "Spreads the active, non-pinned importances of a namespace over 0.10..0.90 by rank, "
        "keeping their order (on demand)."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = ""
    params_model = RecalibrationParams

    async def run(self, ctx: JobContext, params: RecalibrationParams) -> Report:
        before: list[float] = []
        after: list[float] = []
        details: list[dict[str, Any]] = []
        changed = 0
        for i, namespace in enumerate(ctx.namespaces):
            async with ctx.deps.pool.connection() as conn:
                rows = await repository.importances(conn, namespace)
            old = {r["id"]: float(r["importance"]) for r in rows}
            if not old:
                continue
            new = recalibrated(old)
            before += old.values()
            after += new.values()
            moved = {k: v for k, v in new.items() if v != old[k]}
            details += [
                {"id": k, "old_importance": old[k], "new_importance": v} for k, v in moved.items()
            ][: MAX_DETAILS - len(details)]
            if not ctx.dry_run and moved:
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    written = await memory_repository.set_importance(
                        conn,
                        moved,
                        versions={r["id"]: int(r["version"]) for r in rows},
                        action="importance-recalibrated",
                        run_id=ctx.run_id,
                    )
                changed += len(written)
            elif moved:
                changed += len(moved)
            await ctx.step("recalibrating", i + 1, len(ctx.namespaces))
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "recalibrated": changed,
            "before": _summary(before),
            "after": _summary(after),
            "details": details,
        }
        if not ctx.dry_run:
            report["changes"] = {"recalibrated": changed}
        return report
