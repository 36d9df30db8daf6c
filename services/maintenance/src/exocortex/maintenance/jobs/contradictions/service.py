"""Batch detection over a whole namespace, and resolving or dismissing a contradiction.

Detection reads each active memory's close neighbours from retrieval's vector index (at least
``enrichment.contradiction_threshold`` similar; the seed compared the 300 newest pairwise) and
keeps the pairs the shared detector (``core.domain.contradictions``) calls a contradiction:
a negated restatement or a changed value of the same claim. Known pairs, in any status, are not
recorded again, so a run repeated finds nothing new.

Resolving keeps one side: the other is archived, superseded by the kept memory (restorable from
the trash). Dismissing only marks the record.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from pydantic import Field

from exocortex.core import scope
from exocortex.core.domain.contradictions import NEGATION_OVERLAP, find_contradiction
from exocortex.core.domain.vectors import from_bytes
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.repositories import contradictions
from exocortex.maintenance.deps import Deps
from exocortex.maintenance.jobs import memory_repository
from exocortex.maintenance.jobs.base import JobContext, Params, Report
from exocortex.maintenance.jobs.contradictions import repository
from exocortex.maintenance.jobs.contradictions.repository import ContradictionRow
from exocortex.maintenance.jobs.settings import float_setting

NEAREST_BATCH = 256
STATUSES = ("pending", "resolved", "dismissed")
MAX_REPORTED = 50


class DetectParams(Params):
    # None: the enrichment.contradiction_threshold setting (0.7).
    min_similarity: float | None = Field(default=None, ge=0.3, le=1.0)
    neighbours: int = Field(default=10, ge=1, le=100)


class ContradictionJob:
    name = "contradictions"
    description = (
        "Batch contradiction detection over each namespace (negated restatements and changed "
        "values among close neighbours); new pairs are recorded as pending."
    )
    scope: Literal["namespace"] = "namespace"
    schedule = "30 3 * * *"
    params_model = DetectParams

    async def run(self, ctx: JobContext, params: DetectParams) -> Report:
        settings = await ctx.deps.settings.get()
        threshold = params.min_similarity or float_setting(
            settings, "enrichment.contradiction_threshold", 0.7
        )
        overlap = float_setting(
            settings, "enrichment.contradiction_negation_overlap", NEGATION_OVERLAP
        )
        found: list[dict[str, Any]] = []
        compared = 0
        for namespace in ctx.namespaces:
            async with ctx.deps.pool.connection() as conn:
                subjects = await repository.subjects(conn, namespace)
                known = await repository.known_pairs(conn, [s.id for s in subjects])
            content = {s.id: s.content for s in subjects}
            seen: set[frozenset[str]] = set()
            for start in range(0, len(subjects), NEAREST_BATCH):
                batch = subjects[start : start + NEAREST_BATCH]
                results = await ctx.deps.retrieval.nearest(
                    [from_bytes(s.embedding) for s in batch],
                    namespace=namespace,
                    limit=params.neighbours,
                    min_similarity=threshold,
                    exclude_ids=[[s.id] for s in batch],
                    roots_only=True,
                    exclude_metadata=True,
                    background=True,
                )
                for subject, hits in zip(batch, results, strict=True):
                    for hit in hits:
                        pair = frozenset((subject.id, hit.root_id))
                        other = content.get(hit.root_id)
                        if other is None or len(pair) < 2 or pair in seen or pair in known:
                            continue
                        seen.add(pair)
                        compared += 1
                        candidate = find_contradiction(
                            subject.content, other, negation_overlap=overlap
                        )
                        if candidate is None:
                            continue
                        item = {
                            "namespace": namespace,
                            "memory_a_id": subject.id,
                            "memory_b_id": hit.root_id,
                            "similarity": round(hit.similarity, 4),
                            **asdict(candidate),
                        }
                        if not ctx.dry_run:
                            async with ctx.deps.pool.connection() as conn:
                                new = await contradictions.add_candidate(
                                    conn, subject.id, hit.root_id, candidate
                                )
                            if new is None:
                                continue
                            item["id"] = new
                        found.append(item)
                await ctx.step(f"detecting in {namespace}", start + len(batch), len(subjects))
        report: Report = {
            "dry_run": ctx.dry_run,
            "namespaces": ctx.namespaces,
            "pairs_compared": compared,
            "detected": len(found),
            "contradictions": found[:MAX_REPORTED],
        }
        if not ctx.dry_run:
            report["changes"] = {"recorded": len(found)}
        return report


def contradiction_dict(row: ContradictionRow) -> dict[str, Any]:
    out = asdict(row)
    out["created_at"] = row.created_at.isoformat()
    out["updated_at"] = row.updated_at.isoformat()
    return out


class Contradictions:
    """Reading and resolving the records (the gRPC API's side; detection is the job above)."""

    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    async def list(self, namespace: str, status: str, limit: int) -> list[dict[str, Any]]:
        wanted = status or "pending"
        if wanted not in (*STATUSES, "all"):
            raise InvalidArgument(
                f"status must be one of {', '.join(STATUSES)} or all (got {status!r})",
                field="status",
            )
        async with self._deps.pool.connection() as conn:
            rows = await repository.list_(
                conn,
                scope.require(namespace) if namespace else None,
                None if wanted == "all" else wanted,
                limit,
            )
        return [contradiction_dict(r) for r in rows]

    async def get(self, contradiction_id: str) -> dict[str, Any]:
        async with self._deps.pool.connection() as conn:
            row = await repository.get(conn, contradiction_id)
        if row is None:
            raise NotFound(f"contradiction {contradiction_id} not found", field="id")
        return contradiction_dict(row)

    async def update(
        self, contradiction_id: str, status: str, resolution: str | None, keep_id: str | None
    ) -> dict[str, Any]:
        if status not in STATUSES:
            raise InvalidArgument(
                f"status must be one of {', '.join(STATUSES)} (got {status!r})", field="status"
            )
        if keep_id is not None and status != "resolved":
            raise InvalidArgument("keep_id only goes with status 'resolved'", field="keep_id")
        async with self._deps.pool.connection() as conn, conn.transaction():
            row = await repository.get(conn, contradiction_id, lock=True)
            if row is None:
                raise NotFound(f"contradiction {contradiction_id} not found", field="id")
            if keep_id is not None:
                sides = {row.memory_a_id: row.memory_b_id, row.memory_b_id: row.memory_a_id}
                if keep_id not in sides:
                    raise InvalidArgument(
                        f"keep_id must be {row.memory_a_id} or {row.memory_b_id}",
                        field="keep_id",
                    )
                await memory_repository.archive(
                    conn,
                    [sides[keep_id]],
                    action="contradiction-resolved",
                    run_id=None,
                    superseded_by=keep_id,
                    details={sides[keep_id]: {"contradiction_id": contradiction_id}},
                )
                resolution = resolution or f"kept {keep_id}"
            await repository.set_status(conn, contradiction_id, status, resolution)
            updated = await repository.get(conn, contradiction_id)
        assert updated is not None
        return contradiction_dict(updated)
