"""The repair job: re-embed what has no vector (or, with ``stale_model``, another model's)
through the embedding service, in batches that yield between them; keep token vectors for the
memories that have none (late-interaction re-scoring: those stored before they were kept, or
brought back by a path that does not keep them); prune published outbox rows. Each re-embedded
row gets a new version and an event, so the vector index follows, and its token vectors from
the same run of the model."""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import Field

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import Pool
from exocortex.core.domain.vectors import to_bytes
from exocortex.core.repositories import tokens as token_repository
from exocortex.maintenance import events
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.repair import repository
from exocortex.maintenance.jobs.settings import int_setting

RERANK = "search.rerank_candidates"


class RepairParams(Params):
    reembed: bool = True
    stale_model: bool = True
    limit: int = Field(default=10_000, ge=1, le=1_000_000)
    tokens: bool = Field(default=True, description="keep token vectors for memories that have none")
    # Every memory at once by default: until a memory has its token vectors, each search that
    # re-scores it encodes it (tens of ms), so an upgraded store should get them in one run
    # (batches yield between them, with progress), not 10,000 a night.
    tokens_limit: int = Field(default=1_000_000, ge=1, le=10_000_000)
    batch: int = Field(default=64, ge=1, le=512)
    prune_outbox_days: int = Field(default=7, ge=0, le=3650, description="0: keep the outbox")


class RepairJob:
    name = "repair"
    description = (
        "Re-embeds active rows with no vector or another model's (not chunked parents nor "
        "benchmark items), keeps token vectors for memories that have none and prunes "
        "published outbox rows."
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
                    vectors, tokens = await ctx.deps.embedding.embed_with_tokens(
                        [r.content for r in batch], deadline_seconds=120, bulk=True
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
                    # The old model's token vectors went with its vector (a trigger).
                    done = {c.memory_id for c in changed}
                    await _keep_tokens(
                        ctx.deps.pool,
                        info.fingerprint,
                        info.dimensions,
                        [(r.id, r.content) for r in batch if r.id in done],
                        None
                        if tokens is None
                        else [t for r, t in zip(batch, tokens, strict=True) if r.id in done],
                    )
                    await ctx.step("re-embedding", start + len(batch), len(rows))
            report |= {
                "model": info.fingerprint,
                "to_embed": dict(reasons),
                "processed": embedded,
                "failed": 0,
            }
        # Kept only while search re-scores with them (search.rerank_candidates > 0).
        if params.tokens and int_setting(await ctx.deps.settings.get(), RERANK, 20) > 0:
            report["tokens"] = await _backfill_tokens(ctx, params)
        outbox = 0
        if params.prune_outbox_days:
            async with ctx.deps.pool.connection() as conn:
                outbox = await repository.prune_outbox(conn, params.prune_outbox_days, ctx.dry_run)
            report["outbox_pruned"] = outbox
        if not ctx.dry_run:
            report["changes"] = {"reembedded": embedded, "outbox_pruned": outbox}
        return report


async def _backfill_tokens(ctx: JobContext, params: RepairParams) -> dict[str, int]:
    """Token vectors for up to ``limit`` memories of the running model that keep none: each
    batch is one embedding request (its vectors are not used; the stored ones stay)."""
    embedding: EmbeddingClient = ctx.deps.embedding
    info = await embedding.model_info()
    async with ctx.deps.pool.connection() as conn:
        rows = await repository.without_tokens(conn, info.fingerprint, params.tokens_limit)
    kept = 0
    if not ctx.dry_run:
        for start in range(0, len(rows), params.batch):
            batch = rows[start : start + params.batch]
            _, tokens = await embedding.embed_with_tokens(
                [r.content for r in batch], deadline_seconds=120, bulk=True
            )
            if tokens is None:  # the service's encoder gives none: nothing to keep
                break
            kept += await _keep_tokens(
                ctx.deps.pool,
                info.fingerprint,
                info.dimensions,
                [(r.id, r.content) for r in batch],
                tokens,
            )
            await ctx.step("token vectors", start + len(batch), len(rows))
    return {"missing": len(rows), "kept": kept}


async def _keep_tokens(
    pool: Pool,
    model: str,
    dimensions: int,
    rows: list[tuple[str, str]],
    tokens: list[bytes] | None,
) -> int:
    """Write each row's token vectors (one transaction); a row whose text changed meanwhile
    keeps none. Returns how many were written."""
    if not tokens or not rows:
        return 0
    written = 0
    async with pool.connection() as conn, conn.transaction():
        for (memory_id, content), packed in zip(rows, tokens, strict=True):
            written += await token_repository.put(
                conn, memory_id, content, model=model, dimensions=dimensions, tokens=packed
            )
    return written
