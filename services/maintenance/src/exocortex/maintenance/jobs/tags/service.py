"""The tag cleanup job: suggest near-duplicate tags; apply a given pair, or auto-merge the
near-certain ones (similarity ≥ 0.95, the spelling merged away used at most 50 times). A merge
renames the tag on every memory, records ``from → to`` in ``tags.alias_map`` (so later writes
normalise to it) and emits the events that re-project the memories' tags."""

from __future__ import annotations

from dataclasses import asdict
from typing import Literal

from pydantic import Field, model_validator

from exocortex.maintenance import events
from exocortex.maintenance.jobs import repository as job_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.tags import repository
from exocortex.maintenance.jobs.tags.similarity import Suggestion, suggestions

TAG_LIMIT = 3_000
AUTO_SIMILARITY = 0.95
AUTO_MAX_FROM_COUNT = 50


class TagParams(Params):
    min_similarity: float = Field(default=0.8, ge=0.5, le=0.99)
    limit: int = Field(default=20, ge=1, le=500)
    # Merge one given pair ...
    from_tag: str | None = Field(default=None, min_length=1, max_length=100)
    to_tag: str | None = Field(default=None, min_length=1, max_length=100)
    # ... or up to this many near-certain suggestions (0: only suggest).
    auto_merge: int = Field(default=0, ge=0, le=100)

    @model_validator(mode="after")
    def _pair(self) -> TagParams:
        if (self.from_tag is None) != (self.to_tag is None):
            raise ValueError("give both from_tag and to_tag, or neither")
        if self.from_tag is not None and self.from_tag == self.to_tag:
            raise ValueError("from_tag and to_tag are the same tag")
        return self


class TagCleanupJob:
    name = "tags"
    description = (
        "Near-duplicate tags (normalised Levenshtein ≥ 0.8 among tags used twice or more) as "
        "alias suggestions; merges a given pair or auto-merges the near-certain ones."
    )
    scope: Literal["global"] = "global"
    schedule = "0 5 * * *"
    params_model = TagParams

    async def run(self, ctx: JobContext, params: TagParams) -> Report:
        async with ctx.deps.pool.connection() as conn:
            counts = await repository.counts(conn, TAG_LIMIT)
        found = suggestions(counts, min_similarity=params.min_similarity)
        auto = params.auto_merge if ctx.trigger == "api" else max(params.auto_merge, 3)
        to_merge: list[Suggestion] = []
        if params.from_tag is not None and params.to_tag is not None:
            to_merge = [
                Suggestion(params.from_tag, params.to_tag, 0.0, counts.get(params.from_tag, 0), 0)
            ]
        elif auto:
            to_merge = [
                s
                for s in found
                if s.similarity >= AUTO_SIMILARITY and s.from_count <= AUTO_MAX_FROM_COUNT
            ][:auto]
        merged = []
        if not ctx.dry_run:
            for pair in to_merge:
                async with ctx.deps.pool.connection() as conn, conn.transaction():
                    changed = await repository.merge(conn, pair.from_tag, pair.to_tag)
                    await repository.add_alias(conn, pair.from_tag, pair.to_tag)
                    await events.emit(conn, changed, "updated")
                    await job_repository.audit(
                        conn,
                        [(c.memory_id, c.namespace, "tag-merged", asdict(pair)) for c in changed],
                        ctx.run_id,
                    )
                merged.append({**asdict(pair), "memories": len(changed)})
            await ctx.deps.settings.changed()
        report: Report = {
            "dry_run": ctx.dry_run,
            "suggestions": [asdict(s) for s in found[: params.limit]],
            "suggestion_count": len(found),
            "merges": merged if not ctx.dry_run else [asdict(s) for s in to_merge],
        }
        if not ctx.dry_run:
            report["changes"] = {"merged": len(merged)}
        return report
