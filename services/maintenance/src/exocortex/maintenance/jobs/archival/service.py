"""The archival job: stale, abandoned and expired memories are archived (is_active false,
updated_at set, an audit row with the reason, the event that drops them from the indexes).
Never deleted: they stay readable by id and restorable from the trash. A dry run is the decay
preview: what would be archived and why."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import Field

from exocortex.maintenance.jobs import memory_repository
from exocortex.maintenance.jobs.archival import repository
from exocortex.maintenance.jobs.archival.repository import ArchiveCandidate
from exocortex.maintenance.jobs.base import JobContext, Params, Report

MAX_LISTED = 100
BATCH = 500


class ArchiveParams(Params):
    stale_days: int = Field(default=90, ge=0, le=36_500)
    max_importance: float = Field(default=0.3, ge=0.0, le=1.0)
    max_access_count: int = Field(default=2, ge=0, le=1_000_000)
    abandoned_days: int = Field(default=365, ge=1, le=36_500)
    include_expired: bool = True


def _candidate(c: ArchiveCandidate) -> dict[str, Any]:
    return {
        "id": c.id,
        "namespace": c.namespace,
        "content": c.content,
        "importance": c.importance,
        "access_count": c.access_count,
        "created_at": c.created_at.isoformat(),
        "last_accessed_at": c.last_accessed_at.isoformat() if c.last_accessed_at else None,
        "expires_at": c.expires_at.isoformat() if c.expires_at else None,
        "reason": c.reason,
    }


class ArchivalJob:
    name = "archival"
    description = (
        "Archives stale (low importance, old, rarely used), abandoned (a year old, never used) "
        "and expired memories; pinned ones are never stale; nothing is deleted."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "30 4 * * *"
    params_model = ArchiveParams

    async def run(self, ctx: JobContext, params: ArchiveParams) -> Report:
        found: list[ArchiveCandidate] = []
        archived = 0
        for namespace in ctx.namespaces:
            async with ctx.deps.pool.connection() as conn:
                candidates = await repository.candidates(
                    conn,
                    namespace,
                    stale_days=params.stale_days,
                    max_importance=params.max_importance,
                    max_access_count=params.max_access_count,
                    abandoned_days=params.abandoned_days,
                    include_expired=params.include_expired,
                )
            found += candidates
            if ctx.dry_run:
                continue
            for start in range(0, len(candidates), BATCH):
                batch = candidates[start : start + BATCH]
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    done = await memory_repository.archive(
                        conn,
                        [c.id for c in batch],
                        action="archived",
                        run_id=ctx.run_id,
                        details={c.id: {"reason": c.reason} for c in batch},
                        versions={c.id: c.version for c in batch},
                    )
                archived += len(done)
                await ctx.step(f"archiving {namespace}", start + len(batch), len(candidates))
        reasons = Counter(c.reason for c in found)
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "archived": archived,
            "total": len(found),
            "by_reason": dict(reasons),
            "candidates": [_candidate(c) for c in found[:MAX_LISTED]],
        }
        if not ctx.dry_run:
            report["changes"] = {"archived": archived}
        return report
