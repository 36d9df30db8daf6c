"""Nudges the search weights by what turned out useful.

Compares accessed memories found useful (useful_count > 0) with accessed ones never found
useful; each group needs at least 5. Each weight moves by 0.02 at most per run, within
[0.02, 0.40]:

* ``scoring.recency_weight`` up when useful memories are more than 5 days younger, down when
  more than 5 days older;
* ``scoring.frequency_weight`` up when useful ones are accessed 1.5× as often, down below 0.67×;
* ``scoring.graph_weight`` up when useful ones have 0.5 more links on average, down at 0.5 fewer.

(The seed also raised the usefulness weight whenever 20 memories were useful, so it only grew;
that rule is gone.) Each run's report keeps the old and new values; ``revert_run`` puts back the
values a given run replaced.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from exocortex.core.db.settings_store import upsert_settings
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.maintenance.jobs import repository as job_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report

STEP = 0.02
LOW, HIGH = 0.02, 0.40
MIN_GROUP = 5

_GROUPS_SQL = """
SELECT (m.useful_count > 0) AS useful, count(*)::int AS n,
       avg(extract(epoch FROM now() - m.created_at) / 86400.0) AS age_days,
       avg(u.access_count) AS accesses,
       avg((SELECT count(*) FROM memory_links l
             WHERE l.source_id = m.id OR l.target_id = m.id)) AS links
  FROM memories m JOIN memory_usage u ON u.memory_id = m.id
 WHERE m.is_active AND m.parent_id IS NULL AND u.access_count > 0
 GROUP BY 1
"""


class WeightParams(Params):
    revert_run: int | None = Field(default=None, ge=1)


def _nudge(value: float, direction: int) -> float:
    return round(min(HIGH, max(LOW, value + direction * STEP)), 2)


class WeightTuningJob:
    name = "weights"
    description = (
        "Nudges the recency, frequency and graph search weights (±0.02 a run, within "
        "0.02..0.40) by what turned out useful; each change is kept in the run's report and "
        "can be reverted (revert_run)."
    )
    scope: Literal["global"] = "global"
    schedule = "45 5 * * 0"
    params_model = WeightParams

    async def run(self, ctx: JobContext, params: WeightParams) -> Report:
        settings = await ctx.deps.settings.get()
        if params.revert_run is not None:
            return await self._revert(ctx, params.revert_run)
        async with ctx.deps.pool.connection() as conn:
            groups = {r["useful"]: r for r in await (await conn.execute(_GROUPS_SQL)).fetchall()}
        useful, other = groups.get(True), groups.get(False)
        if useful is None or other is None or min(useful["n"], other["n"]) < MIN_GROUP:
            return {
                "dry_run": ctx.dry_run,
                "skipped": f"needs at least {MIN_GROUP} accessed memories found useful and "
                f"{MIN_GROUP} never found useful",
                "changes": {"weights": 0},
            }
        directions: dict[str, int] = {}
        age_gap = float(other["age_days"]) - float(useful["age_days"])
        if abs(age_gap) > 5:
            directions["scoring.recency_weight"] = 1 if age_gap > 0 else -1
        ratio = float(useful["accesses"]) / max(float(other["accesses"]), 1e-9)
        if ratio > 1.5 or ratio < 0.67:
            directions["scoring.frequency_weight"] = 1 if ratio > 1.5 else -1
        link_gap = float(useful["links"]) - float(other["links"])
        if abs(link_gap) > 0.5:
            directions["scoring.graph_weight"] = 1 if link_gap > 0 else -1
        moved: dict[str, dict[str, float]] = {}
        for key, direction in directions.items():
            old = float(settings.get(key, "0.1"))
            new = _nudge(old, direction)
            if new != old:
                moved[key] = {"old": old, "new": new}
        if moved and not ctx.dry_run:
            async with ctx.deps.pool.connection() as conn:
                await upsert_settings(conn, {k: str(v["new"]) for k, v in moved.items()})
            await ctx.deps.settings.changed()
        return {
            "dry_run": ctx.dry_run,
            "signals": {
                "useful": useful["n"],
                "not_useful": other["n"],
                "age_gap_days": round(age_gap, 2),
                "access_ratio": round(ratio, 3),
                "link_gap": round(link_gap, 3),
            },
            "weights": moved,
            "changes": {"weights": 0 if ctx.dry_run else len(moved)},
        }

    async def _revert(self, ctx: JobContext, run_id: int) -> Report:
        async with ctx.deps.pool.connection() as conn:
            run = await job_repository.get_run(conn, run_id)
            if run is None or run.job != self.name:
                raise NotFound(f"no weights run {run_id}", field="params.revert_run")
            moved: dict[str, Any] = (run.report or {}).get("weights") or {}
            if run.dry_run or not moved:
                raise InvalidArgument(
                    f"run {run_id} changed no weight; nothing to revert", field="params.revert_run"
                )
            restored = {k: str(v["old"]) for k, v in moved.items()}
            if not ctx.dry_run:
                await upsert_settings(conn, restored)
        await ctx.deps.settings.changed()
        return {
            "dry_run": ctx.dry_run,
            "reverted_run": run_id,
            "weights": {k: {"old": v["new"], "new": v["old"]} for k, v in moved.items()},
            "changes": {"weights": 0 if ctx.dry_run else len(restored)},
        }
