"""Curation jobs over REST (served by the maintenance service): importance adjustment,
archival and its preview, re-embedding, and tag merges. Nothing is deleted: archived memories
stay restorable from the trash."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Response

from exocortex.api.limits import MAINTENANCE_WAIT_DEFAULT
from exocortex.api.maintenance import (
    ArchiveBody,
    ImportanceBody,
    JobRunOut,
    ReembedBody,
    ReportOut,
    TagMergeBody,
)
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers.maintenance_runs import (
    RUN_RESPONSES,
    NamespaceQuery,
    report_or_run,
    start_job,
)

router = APIRouter(prefix="/api", tags=["maintenance"])


@router.post("/importance-adjust", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def importance_adjust(
    body: ImportanceBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Boost used memories, decay unused ones, boost memories of central entities (once).
    Pinned memories are untouched; a second run in a row changes nothing.
    `{boosted, decayed, graph_boosted, dry_run, details[{id, action, old_importance,
    new_importance}]}`."""
    params = body.model_dump(exclude={"dry_run", "namespace", "wait_seconds"}, exclude_none=True)
    run = await start_job(
        backends,
        "importance",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)


@router.post("/archive", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def archive(body: ArchiveBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Archive stale, abandoned and expired memories (never deleted: restorable from the
    trash). `{archived, total, by_reason, candidates[{id, content, importance, access_count,
    created_at, last_accessed_at, reason}], dry_run}`."""
    params = body.model_dump(exclude={"dry_run", "namespace", "wait_seconds"})
    run = await start_job(
        backends,
        "archival",
        dry_run=body.dry_run,
        params=params,
        namespace=body.namespace,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)


@router.get("/archive/preview", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def archive_preview(
    backends: BackendsDep,
    response: Response,
    namespace: NamespaceQuery = None,
) -> dict[str, Any]:
    """The decay preview: what archival would archive now, and why (a dry run; changes
    nothing, so a read-only key may ask)."""
    run = await start_job(
        backends,
        "archival",
        dry_run=True,
        params={},
        namespace=namespace,
        wait_seconds=MAINTENANCE_WAIT_DEFAULT,
    )
    return report_or_run(run, response)


@router.post("/reembed", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES)
async def reembed(body: ReembedBody, backends: BackendsDep, response: Response) -> dict[str, Any]:
    """Embed active rows with no vector (not chunked parents nor benchmark items) and, by
    default, rows embedded by another model. `{processed, failed, to_embed, model}`. Spans
    every namespace: needs a key for all."""
    run = await start_job(
        backends,
        "repair",
        dry_run=body.dry_run,
        params={
            "reembed": True,
            "stale_model": body.stale_model,
            "limit": body.limit,
            "prune_outbox_days": 0,
        },
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)


@router.post(
    "/maintenance/tags/merge", response_model=ReportOut | JobRunOut, responses=RUN_RESPONSES
)
async def merge_tags(
    body: TagMergeBody, backends: BackendsDep, response: Response
) -> dict[str, Any]:
    """Near-duplicate tag suggestions, and a merge: the given pair, or up to `auto_merge`
    near-certain ones. A merge renames the tag everywhere and records it in `tags.alias_map`."""
    params = body.model_dump(exclude={"dry_run", "wait_seconds"}, exclude_none=True)
    run = await start_job(
        backends,
        "tags",
        dry_run=body.dry_run,
        params=params,
        namespace=None,
        wait_seconds=body.wait_seconds,
    )
    return report_or_run(run, response)
