"""The JSON backup, streamed from the retrieval service batch by batch (bounded memory)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Annotated

import grpc
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from exocortex.api.backup import Backup
from exocortex.api.limits import NAMESPACE_MAX
from exocortex.core.logging import get_logger
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import admin_pb2

router = APIRouter(tags=["data"])
log = get_logger(__name__)

BACKUP_VERSION = 2


async def _document(
    batches: AsyncIterator[admin_pb2.ExportBatch], first: admin_pb2.ExportBatch | None, head: str
) -> AsyncIterator[bytes]:
    yield head.encode()
    section = ""
    items_in_section = 0

    async def all_batches() -> AsyncIterator[admin_pb2.ExportBatch]:
        if first is not None:
            yield first
        async for batch in batches:
            yield batch

    try:
        async for batch in all_batches():
            if batch.section == "settings":
                if section:
                    yield b"]"
                settings = batch.items_json[0] if batch.items_json else "{}"
                yield f',"settings":{settings}'.encode()
                section = "settings"
                continue
            if batch.section != section:
                if section:
                    yield b"]"
                yield f',"{batch.section}":['.encode()
                section, items_in_section = batch.section, 0
            for item in batch.items_json:
                yield (b"," if items_in_section else b"") + item.encode()
                items_in_section += 1
    except grpc.aio.AioRpcError as exc:
        # Headers are sent; the only honest signal left is an incomplete (invalid) document.
        log.error("export stream broke", code=exc.code().name)
        raise
    if section != "settings":
        raise RuntimeError("export stream ended before the settings section")
    yield b"}"


@router.get(
    "/api/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The backup document, as an attachment.",
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Backup"}}},
            "model": Backup,
        }
    },
)
async def export(
    backends: BackendsDep,
    namespace: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=NAMESPACE_MAX,
            description="Only this namespace (default: all).",
        ),
    ] = None,
    include_embeddings: Annotated[
        bool,
        Query(description="Also each memory's embedding (base64 of its float32 bytes)."),
    ] = False,
) -> StreamingResponse:
    """A JSON backup: memories with every field (embeddings only if asked), links, entities,
    goals, milestones, goal links, contradictions, consolidations and settings (secrets
    masked). POST /api/memories/import restores it exactly."""
    stream = backends.export.ExportData(
        admin_pb2.ExportRequest(
            namespace=namespace or "", batch_size=500, include_embeddings=include_embeddings
        )
    )
    # Read the first batch before answering, so an unreachable service is a 503 problem rather
    # than a broken download.
    batches = aiter(stream)
    first = await anext(batches, None)
    now = datetime.now(UTC)
    head = json.dumps(
        {"version": BACKUP_VERSION, "exported_at": now.isoformat(), "namespace": namespace}
    )[:-1]
    filename = f"exocortex-backup-{now.strftime('%Y%m%dT%H%M%SZ')}.json"
    return StreamingResponse(
        _document(batches, first, head),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
