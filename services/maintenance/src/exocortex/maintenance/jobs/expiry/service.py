"""Sentinel-report expiry: health, metrics and sentinel reports agents store over MCP pile up;
once one is older than `sentinel.report_ttl_days` (30; 0: off) and not important (≤ 0.6) it
gets an expiry a week ahead, and the archival job archives it when that passes (never deleted).
A report someone gave an expiry, or made important, is left as it is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.expiry import repository
from exocortex.maintenance.jobs.expiry.repository import GRACE_DAYS
from exocortex.maintenance.jobs.settings import int_setting

SETTING = "sentinel.report_ttl_days"
MAX_LISTED = 100


class ExpiryParams(Params):
    # None: the sentinel.report_ttl_days setting (0 there: off).
    ttl_days: int | None = Field(default=None, ge=0, le=36_500)


class SentinelExpiryJob:
    name = "sentinel-expiry"
    description = (
        "Gives sentinel, health-check and metrics reports stored over MCP (importance ≤ 0.6) an "
        "expiry a week ahead once they are sentinel.report_ttl_days old; archival archives them "
        "when it passes."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "15 4 * * *"
    params_model = ExpiryParams

    async def run(self, ctx: JobContext, params: ExpiryParams) -> Report:
        ttl = params.ttl_days
        if ttl is None:
            ttl = int_setting(await ctx.deps.settings.get(), SETTING, 30)
            if ttl == 0:
                return {"dry_run": ctx.dry_run, "skipped": f"{SETTING} is 0", "expiring": 0}
        ids: list[str] = []
        for i, namespace in enumerate(ctx.namespaces):
            if ctx.dry_run:
                async with ctx.deps.pool.connection() as conn:
                    ids += await repository.due(conn, namespace, ttl)
            else:
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    ids += [
                        c.memory_id
                        for c in await repository.expire(conn, namespace, ttl, ctx.run_id)
                    ]
            await ctx.step("expiring", i + 1, len(ctx.namespaces))
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "ttl_days": ttl,
            "grace_days": GRACE_DAYS,
            "expiring": len(ids),
            "ids": ids[:MAX_LISTED],
        }
        if not ctx.dry_run:
            report["changes"] = {"expiry_set": len(ids)}
        return report
