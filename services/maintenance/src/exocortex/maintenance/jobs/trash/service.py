"""The trash purge: hard-deletes archived memories a person put in the trash once they have been
there `trash.auto_purge_days` (30; 0: never on the clock). What automation archived (stale,
abandoned, expired, consolidated, superseded) stays restorable until a person empties the trash
(`include_automation`); a memory superseded by an active one is kept, as its history.

A dry run lists the trash, each row with who archived it and whether this run would purge it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.settings import int_setting
from exocortex.maintenance.jobs.trash import repository
from exocortex.maintenance.jobs.trash.repository import Trashed

SETTING = "trash.auto_purge_days"
MAX_LISTED = 100
BATCH = 500


class TrashParams(Params):
    # None: the trash.auto_purge_days setting (0 there: the clock is off, nothing is purged).
    older_than_days: int | None = Field(default=None, ge=0, le=36_500)
    # A person emptying the trash: what automation archived goes too.
    include_automation: bool = False


def _item(row: Trashed, *, days: int, everything: bool, now: datetime) -> dict[str, Any]:
    if row.successor_active:
        kept: str | None = "superseded by an active memory"
    elif row.archived_by != "person" and not everything:
        kept = "archived by automation: kept until a person empties the trash"
    elif row.archived_at >= now - timedelta(days=days):
        kept = f"in the trash for less than {days} days"
    else:
        kept = None
    return {
        "id": row.id,
        "namespace": row.namespace,
        "content": row.content,
        "archived_by": row.archived_by,
        "archived_at": row.archived_at.isoformat(),
        "superseded_by": row.superseded_by,
        "purge_after": (
            (row.archived_at + timedelta(days=days)).isoformat()
            if row.archived_by == "person" and not row.successor_active
            else None
        ),
        "purged": kept is None,
        "kept_because": kept,
    }


class TrashPurgeJob:
    name = "trash-purge"
    description = (
        "Deletes for good the memories a person put in the trash more than "
        "trash.auto_purge_days ago; what automation archived stays until a person empties "
        "the trash (include_automation); a memory superseded by an active one is kept."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "45 4 * * *"
    params_model = TrashParams

    async def run(self, ctx: JobContext, params: TrashParams) -> Report:
        settings = await ctx.deps.settings.get()
        days = params.older_than_days
        if days is None:
            days = int_setting(settings, SETTING, 30)
            if days == 0:
                return {"dry_run": ctx.dry_run, "skipped": f"{SETTING} is 0", "purged": 0}
        everything = params.include_automation
        now = datetime.now(UTC)
        listed: list[dict[str, Any]] = []
        by_origin = {"person": 0, "automation": 0}
        purged = 0
        for i, namespace in enumerate(ctx.namespaces):
            async with ctx.deps.pool.connection() as conn:
                for origin, n in (await repository.counts(conn, namespace)).items():
                    by_origin[origin] += n
                if len(listed) < MAX_LISTED:
                    rows = await repository.listed(conn, namespace, MAX_LISTED - len(listed))
                    listed += [_item(r, days=days, everything=everything, now=now) for r in rows]
            if ctx.dry_run:
                async with ctx.deps.pool.connection() as conn:
                    purged += len(
                        await repository.due(
                            conn, namespace, days=days, everything=everything, limit=1_000_000
                        )
                    )
                continue
            while True:
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    rows = await repository.due(
                        conn, namespace, days=days, everything=everything, limit=BATCH
                    )
                    gone = await repository.purge(
                        conn, rows, days=days, everything=everything, run_id=ctx.run_id
                    )
                purged += len(gone)
                if len(rows) < BATCH or not gone:
                    break
            await ctx.step("purging", i + 1, len(ctx.namespaces))
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "older_than_days": days,
            "include_automation": everything,
            "purged": purged,
            "trash": by_origin,
            "items": listed,
        }
        if not ctx.dry_run:
            report["changes"] = {"purged": purged}
        return report
