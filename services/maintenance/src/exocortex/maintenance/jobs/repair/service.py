"""The repair job: re-embed what has no vector (or, with ``stale_model``, another model's)
through the embedding service, in batches that yield between them; prune published outbox rows.
Each re-embedded row gets a new version and an event, so the vector index follows."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from exocortex.core.domain.vectors import to_bytes
from exocortex.maintenance import events
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.repair import repository


class RepairParams(Params):
    reembed: bool = True
    stale_model: bool = True
    limit: int = Field(default=10_000, ge=1, le=1_000_000)
    batch: int = Field(default=64, ge=1, le=512)
    prune_outbox_days: int = Field(default=7, ge=0, le=3650, description="0: keep the outbox")


class RepairJob:
    name = "repair"
    description = (
        "Re-embeds active rows with no vector or another model's (not chunked parents nor "
        "benchmark items) and prunes published outbox rows."
    )
    scope: Literal["global"] = "global"
    schedule = "0 3 * * *"
    params_model = RepairParams

    async def run(self, ctx: JobContext, params: RepairParams) -> Report:
        report: Report = {"dry_run": ctx.dry_run}
        reasons: Counter[str] = Counter()
        embedded = 0
        if params.reembed:
            info = await ctx.deps.embedding.model_info()
            async with ctx.deps.pool.connection() as conn:
                rows = await repository.to_embed(
                    conn, info.fingerprint, params.limit, params.stale_model
                )
            reasons.update(r.reason for r in rows)
            if not ctx.dry_run:
                for start in range(0, len(rows), params.batch):
                    batch = rows[start : start + params.batch]
                    vectors = await ctx.deps.embedding.embed(
                        [r.content for r in batch], deadline_seconds=120
                    )
                    async with ctx.deps.pool.connection() as conn, conn.transaction():
                        changed = await repository.save_vectors(
                            conn,
                            [
                                (r.id, r.version, to_bytes(v))
                                for r, v in zip(batch, vectors, strict=True)
                            ],
                            info.fingerprint,
                            info.dimensions,
                        )
                        await events.emit(conn, changed, "updated")
                    embedded += len(changed)
                    await ctx.step("re-embedding", start + len(batch), len(rows))
            report |= {
                "model": info.fingerprint,
                "to_embed": dict(reasons),
                "processed": embedded,
                "failed": 0,
            }
        outbox = 0
        if params.prune_outbox_days:
            async with ctx.deps.pool.connection() as conn:
                outbox = await repository.prune_outbox(conn, params.prune_outbox_days, ctx.dry_run)
            report["outbox_pruned"] = outbox
        if not ctx.dry_run:
            report["changes"] = {"reembedded": embedded, "outbox_pruned": outbox}
        return report
