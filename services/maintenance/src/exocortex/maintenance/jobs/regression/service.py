"""Golden-query regression: each query runs through normal search (compact, so it counts no
access), is compared with its baseline, and the run is kept (one row per query under one run
id). A query's first run sets its baseline. Alerts can also be stored as a memory."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from exocortex.core.errors import InvalidArgument
from exocortex.core.ids import new_id
from exocortex.maintenance.deps import Deps
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.regression import repository
from exocortex.maintenance.jobs.regression.compare import compare
from exocortex.maintenance.jobs.regression.repository import RunRow


class GoldenQuery(BaseModel):
    query: str = Field(min_length=1, max_length=1000)
    namespace: str = "default"
    tags: list[str] = Field(default_factory=list)
    content_type: str | None = None
    include_metadata: bool = False


class RegressionParams(Params):
    # One-off queries instead of the setting's (not kept as golden queries).
    queries: list[str | GoldenQuery] | None = None
    update_baselines: bool = False
    reset_baselines: bool = False
    # Only these queries' baselines are reset (their next run sets them again).
    reset_queries: list[str] | None = Field(default=None, max_length=1000)
    # "latest" or a run id: its current results become the baselines.
    promote_run: str | None = Field(default=None, max_length=64)
    # "latest" or a run id: this run compares against that run's results instead of the
    # baselines (which it leaves as they are).
    compare_against: str | None = Field(default=None, max_length=64)
    limit: int | None = Field(default=None, ge=1, le=100)
    # Over the retrieval_regression.min_overlap_at_10 / max_avg_rank_shift settings.
    min_overlap: float | None = Field(default=None, ge=0.0, le=1.0)
    max_rank_shift: float | None = Field(default=None, ge=0.0, le=1000.0)
    # Over each query's own include_metadata, for this run.
    include_metadata: bool | None = None
    # Over the retrieval_regression.create_alert_memory setting, for this run.
    alerts_as_memory: bool | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    limit: int
    min_overlap: float
    max_shift: float
    alert_memory: bool
    enabled: bool


def _thresholds(settings: dict[str, str], limit: int | None) -> Thresholds:
    def num(key: str, default: float) -> float:
        try:
            return float(settings.get(key, default))
        except ValueError:
            return default

    return Thresholds(
        limit=limit or int(num("retrieval_regression.limit", 10)),
        min_overlap=num("retrieval_regression.min_overlap_at_10", 0.8),
        max_shift=num("retrieval_regression.max_avg_rank_shift", 3),
        alert_memory=settings.get("retrieval_regression.create_alert_memory", "true") == "true",
        enabled=settings.get("retrieval_regression.enabled", "true") == "true",
    )


def golden_queries(raw: str) -> list[GoldenQuery]:
    try:
        items = json.loads(raw or "[]")
    except ValueError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        try:
            out.append(
                GoldenQuery(query=item)
                if isinstance(item, str)
                else GoldenQuery.model_validate(item)
            )
        except ValidationError:
            continue  # a malformed entry is skipped, the others still run
    return out


class RegressionJob:
    name = "retrieval-regression"
    description = (
        "Golden queries (retrieval_regression.queries) against their baselines: overlap@k and "
        "rank shift, alerts, run history; baselines set, updated, reset or promoted."
    )
    scope: Literal["global"] = "global"
    schedule = "15 6 * * *"
    params_model = RegressionParams

    async def run(self, ctx: JobContext, params: RegressionParams) -> Report:
        settings = await ctx.deps.settings.get()
        limits = _thresholds(settings, params.limit)
        limits = replace(
            limits,
            min_overlap=limits.min_overlap if params.min_overlap is None else params.min_overlap,
            max_shift=limits.max_shift if params.max_rank_shift is None else params.max_rank_shift,
            alert_memory=(
                limits.alert_memory if params.alerts_as_memory is None else params.alerts_as_memory
            ),
        )
        async with ctx.deps.pool.connection() as conn:
            if params.reset_baselines or params.reset_queries is not None:
                which = None if params.reset_baselines else params.reset_queries
                reset = await repository.reset_baselines(conn, which) if not ctx.dry_run else 0
                return {"dry_run": ctx.dry_run, "reset_baselines": reset}
            if params.promote_run:
                return await self._promote(ctx, params.promote_run)
        queries = (
            [q if isinstance(q, GoldenQuery) else GoldenQuery(query=q) for q in params.queries]
            if params.queries is not None
            else golden_queries(settings.get("retrieval_regression.queries", "[]"))
        )
        if params.include_metadata is not None:
            queries = [
                q.model_copy(update={"include_metadata": params.include_metadata}) for q in queries
            ]
        if ctx.trigger != "api" and not limits.enabled:
            return {"dry_run": ctx.dry_run, "skipped": "retrieval_regression.enabled is false"}
        compared_run: str | None = None
        async with ctx.deps.pool.connection() as conn:
            if params.compare_against:
                compared_run, baselines = await self._run_results(conn, params.compare_against)
            else:
                baselines = await repository.baselines(conn)
        run_id = new_id()
        now = datetime.now(UTC)
        rows: list[RunRow] = []
        new_baselines: dict[str, tuple[str, list[str]]] = {}
        for i, golden in enumerate(queries):
            current = await ctx.deps.retrieval_admin.search_ids(
                golden.query,
                namespace=golden.namespace,
                limit=limits.limit,
                tags=golden.tags,
                content_type=golden.content_type,
                include_metadata=golden.include_metadata,
            )
            baseline = baselines.get(golden.query)
            if compared_run is None and (baseline is None or params.update_baselines):
                new_baselines[golden.query] = (golden.namespace, current)
            base = current if baseline is None else baseline
            result = compare(
                base,
                current,
                limits.limit,
                min_overlap=limits.min_overlap,
                max_rank_shift=limits.max_shift,
            )
            rows.append(
                RunRow(
                    run_id,
                    golden.query,
                    base,
                    current,
                    result.overlap_at_k,
                    result.avg_rank_shift,
                    result.exact_order,
                    result.alert,
                    now,
                )
            )
            await ctx.step("querying", i + 1, len(queries))
        alerts = [r for r in rows if r.alert]
        alert_memory: str | None = None
        if not ctx.dry_run:
            async with ctx.deps.pool.connection() as conn, conn.transaction():
                if rows:
                    await repository.add_run_rows(conn, rows)
                for query, (namespace, ids) in new_baselines.items():
                    await repository.save_baseline(conn, query, namespace, ids)
            if alerts and limits.alert_memory:
                stored = await ctx.deps.ingest.store(
                    namespace="default",
                    content=_alert_text(run_id, alerts),
                    content_type="summary",
                    # The write path's own label for automated writes (no "maintenance").
                    source="api",
                    importance=0.2,
                    tags=["retrieval-regression", "alert"],
                    metadata={"run_id": run_id},
                )
                alert_memory = stored.memory_id
        report: Report = {
            "dry_run": ctx.dry_run,
            "run_id": run_id if not ctx.dry_run else None,
            "golden_count": len(queries),
            "alerts": len(alerts),
            "baselines_set": len(new_baselines),
            "compared_against": compared_run,
            "min_overlap": limits.min_overlap,
            "max_rank_shift": limits.max_shift,
            "limit": limits.limit,
            "alerts_as_memory": limits.alert_memory,
            "alert_memory_id": alert_memory,
            "results": [_result(r) for r in rows],
        }
        if not ctx.dry_run:
            report["changes"] = {"runs": 1 if rows else 0, "baselines": len(new_baselines)}
        return report

    async def _run_results(
        self, conn: repository.Conn, which: str
    ) -> tuple[str, dict[str, list[str]]]:
        """A past run's results by query ("latest" or a run id); 400 when there is none."""
        run_id = await repository.latest_run_id(conn) if which == "latest" else which
        rows = await repository.run_rows(conn, run_id) if run_id else []
        if not run_id or not rows:
            raise InvalidArgument(
                f"no regression run {which!r} to compare against", field="compare_against"
            )
        return run_id, {r.query: list(r.current_ids or []) for r in rows if r.query is not None}

    async def _promote(self, ctx: JobContext, which: str) -> Report:
        async with ctx.deps.pool.connection() as conn, conn.transaction():
            run_id = await repository.latest_run_id(conn) if which == "latest" else which
            rows = await repository.run_rows(conn, run_id) if run_id else []
            if not ctx.dry_run:
                for row in rows:
                    if row.query is not None:
                        await repository.save_baseline(
                            conn, row.query, "default", row.current_ids or []
                        )
        return {"dry_run": ctx.dry_run, "promoted_run": run_id, "baselines": len(rows)}


def _alert_text(run_id: str, alerts: list[RunRow]) -> str:
    lines = [f"Retrieval regression run {run_id}: {len(alerts)} golden queries drifted."]
    lines += [
        f"- {r.query!r}: overlap@k {r.overlap_at_10}, rank shift {r.avg_rank_shift}" for r in alerts
    ]
    return "\n".join(lines)


def _result(row: RunRow) -> dict[str, Any]:
    return {
        "query": row.query,
        "overlap_at_10": row.overlap_at_10,
        "avg_rank_shift": row.avg_rank_shift,
        "exact_order": row.exact_order,
        "alert": row.alert,
        "current_ids": row.current_ids,
        "baseline_ids": row.baseline_ids,
        "created_at": row.created_at.isoformat(),
    }


class RegressionRecords:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    async def runs(self, limit: int) -> dict[str, Any]:
        async with self._deps.pool.connection() as conn:
            rows = await repository.runs(conn, limit)
        return {
            "runs": [
                {
                    "run_id": r.run_id,
                    "query_count": r.query_count,
                    "alerts": r.alerts,
                    "avg_overlap": r.avg_overlap,
                    "created_at": r.created_at.isoformat(),
                }
                for r in rows
            ]
        }

    async def latest(self) -> dict[str, Any]:
        async with self._deps.pool.connection() as conn:
            run_id = await repository.latest_run_id(conn)
            rows = await repository.run_rows(conn, run_id) if run_id else []
        return {"run_id": run_id, "golden_count": len(rows), "results": [_result(r) for r in rows]}
