"""The entity backfill job.

Two kinds of memory are handed back to enrichment (marked pending, with the event enrichment
acts on), which then extracts entities, relationships, links and keywords as for a new store:

* **stuck**: still pending long after their last change. Their event was lost or parked in the
  dead-letter stream, so nothing would ever enrich them;
* **unlinked**: enriched, but linked to no entity, while the extractor of today finds one in
  their text (it learned a name since, or the confidence setting was lowered). Memories in which
  it still finds nothing are left alone, so a second run hands back nothing.

The original backfilled 100 memories without entity links every night, whether or not there was
anything to find.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from exocortex.core.domain.entities import extract_entities
from exocortex.maintenance.jobs.backfill import repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.settings import float_setting

PAGE = 1_000
MIN_CONFIDENCE = 0.5  # enrichment.entity_min_confidence's default


class BackfillParams(Params):
    limit: int = Field(default=1_000, ge=1, le=100_000, description="memories handed back a run")
    stuck_minutes: int = Field(
        default=30, ge=1, le=525_600, description="pending this long since the last change"
    )


class EntityBackfillJob:
    name = "entity-backfill"
    description = (
        "Hands back to enrichment the memories it never finished and those linked to no entity "
        "in which the extractor now finds one."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "15 3 * * *"
    params_model = BackfillParams

    async def run(self, ctx: JobContext, params: BackfillParams) -> Report:
        confidence = float_setting(
            await ctx.deps.settings.get(), "enrichment.entity_min_confidence", MIN_CONFIDENCE
        )
        stuck_total = unlinked_total = examined = requeued = 0
        sample: list[str] = []
        for i, namespace in enumerate(ctx.namespaces):
            budget = params.limit - stuck_total - unlinked_total
            if budget <= 0:
                break
            async with ctx.deps.pool.connection() as conn:
                stuck = await repository.stuck(conn, namespace, params.stuck_minutes, budget)
            found: list[repository.Candidate] = []
            after = ""
            while len(stuck) + len(found) < budget:
                async with ctx.deps.pool.connection() as conn:
                    page = await repository.unlinked_page(conn, namespace, after, PAGE)
                if not page:
                    break
                examined += len(page)
                after = page[-1].id
                found += [c for c in page if _names_found(c.content, confidence)]
                await ctx.step(f"reading {namespace}", examined, 0)
            found = found[: budget - len(stuck)]
            stuck_total += len(stuck)
            unlinked_total += len(found)
            sample += [c.id for c in (stuck + found)][: max(0, 20 - len(sample))]
            if not ctx.dry_run:
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    requeued += await repository.requeue(conn, stuck, "stuck", ctx.run_id)
                    requeued += await repository.requeue(conn, found, "unlinked", ctx.run_id)
            await ctx.step("handing back", i + 1, len(ctx.namespaces))
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "stuck": stuck_total,
            "unlinked_examined": examined,
            "unlinked_with_entities": unlinked_total,
            "sample_ids": sample,
        }
        if not ctx.dry_run:
            report["changes"] = {"handed_to_enrichment": requeued}
        return report


def _names_found(content: str, confidence: float) -> bool:
    return any(e.confidence >= confidence for e in extract_entities(content))
