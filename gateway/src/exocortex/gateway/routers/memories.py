"""Memory writes: store, update, archive/restore, delete, links, import, bulk edits, markdown
ingest and session digests. Every route maps to one ingest RPC; reads live in ``reads``."""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import PurePath
from typing import Annotated, Any

import grpc
from fastapi import APIRouter, HTTPException, Path, Query, status
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.api.limits import ID_MAX, NAMESPACE_MAX, NAMESPACE_PATTERN
from exocortex.api.memories import MemoryCreate, StoredMemory
from exocortex.api.writes import (
    BulkResult,
    BulkTag,
    BulkUpdate,
    Deleted,
    DigestRequest,
    DigestResponse,
    ImportRequest,
    ImportResponse,
    IngestRequest,
    IngestResponse,
    LinkCreate,
    LinkDeleted,
    LinkOut,
    MemoryUpdate,
    UpdatedMemory,
)
from exocortex.core.domain.import_paths import (
    SEND_CONTENT,
    SEND_TRANSCRIPT,
    relative_import_path,
)
from exocortex.core.errors import InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.gateway import convert
from exocortex.gateway.deps import BackendsDep
from exocortex.gateway.routers import backups
from exocortex.proto.v1 import common_pb2, ingest_pb2, retrieval_pb2

log = get_logger(__name__)

router = APIRouter(prefix="/api/memories", tags=["memories"])

ID_PATH = Path(min_length=1, max_length=ID_MAX, description="Memory id (ULID)")
NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"description": "Not found"}}


def stamp(value: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _store_request(body: MemoryCreate) -> ingest_pb2.StoreMemoryRequest:
    request = ingest_pb2.StoreMemoryRequest(
        content=body.content,
        namespace=body.namespace,
        tags=body.tags,
        content_type=body.content_type,
        source=body.source,
        benchmark=body.benchmark,
        metadata_json=json.dumps(body.metadata) if body.metadata else "",
        attribution=common_pb2.Attribution(
            **{
                k: getattr(body, k)
                for k in convert.ATTRIBUTION_FIELDS
                if getattr(body, k) is not None
            }
        ),
    )
    for name in ("source_uri", "importance", "valence", "is_metadata", "parent_id"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    if body.expires_at is not None:
        request.expires_at.CopyFrom(stamp(body.expires_at))
    return request


async def _await_indexed(backends: BackendsDep, memory: common_pb2.Memory) -> bool:
    """Read-your-writes: wait (bounded) until this version is searchable. The write is already
    committed, so if the retrieval service is away the answer is just ``indexed: false``."""
    return await _await_version(backends, memory.id, memory.version)


async def _await_version(
    backends: BackendsDep, memory_id: str, version: int, *, by_event: bool = False
) -> bool:
    return await _await(
        backends,
        retrieval_pb2.AwaitIndexedRequest(memory_id=memory_id, version=version, by_event=by_event),
    )


async def _await_new(backends: BackendsDep, memory_ids: list[str]) -> bool:
    """Read-your-writes for a bulk write: wait (bounded) until every new memory is searchable.
    One call for them all, released by their events: they reach the projector in batches far
    larger than the waits would make projecting them ahead (see retrieval's projection.ahead)."""
    if not memory_ids:
        return True
    return await _await(
        backends, retrieval_pb2.AwaitIndexedRequest(memory_ids=memory_ids, version=1, by_event=True)
    )


async def _await(backends: BackendsDep, request: retrieval_pb2.AwaitIndexedRequest) -> bool:
    wait_ms = backends.settings.store_wait_ms
    if wait_ms <= 0:
        return False
    request.timeout_ms = wait_ms
    try:
        reply = await backends.retrieval.AwaitIndexed(request, timeout=wait_ms / 1000 + 5)
    except grpc.aio.AioRpcError as exc:
        log.warning("could not confirm indexing", code=exc.code().name)
        return False
    return bool(reply.indexed)


def _stored(stored: ingest_pb2.StoreMemoryResponse, indexed: bool) -> dict[str, Any]:
    out = convert.memory(stored.memory)
    out["dedup_action"] = stored.dedup_action
    out["superseded_id"] = stored.matched_id if stored.HasField("matched_id") else None
    out["dedup_similarity"] = (
        stored.dedup_similarity if stored.HasField("dedup_similarity") else None
    )
    out["indexed"] = indexed
    return out


@router.post("", status_code=status.HTTP_201_CREATED, response_model=StoredMemory)
async def create_memory(body: MemoryCreate, backends: BackendsDep) -> dict[str, Any]:
    """Store a memory. Returns once it is searchable (`indexed: true`) or after a bounded wait
    (`indexed: false`: it is committed and will be searchable shortly). `dedup_action` says
    whether it was created, matched an existing memory (`skipped`, with `superseded_id` and
    `dedup_similarity`), replaced one (`superseded`) or, in merge mode, was appended to a similar
    one (`merged`: the response is that memory)."""
    stored: ingest_pb2.StoreMemoryResponse = await backends.ingest.StoreMemory(
        _store_request(body), timeout=backends.settings.rpc_timeout_seconds
    )
    if body.parent_id is not None:
        # A child is indexed with its parent, whose version the store moved on.
        return _stored(stored, await _await_parent(backends, body.parent_id))
    return _stored(stored, await _await_indexed(backends, stored.memory))


async def _await_parent(backends: BackendsDep, parent_id: str) -> bool:
    reply: retrieval_pb2.GetMemoriesResponse = await backends.retrieval.GetMemories(
        retrieval_pb2.GetMemoriesRequest(ids=[parent_id]),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    if not reply.memories:
        return False
    return await _await_version(backends, parent_id, reply.memories[0].version)


@router.post(
    "/import",
    response_model=ImportResponse | backups.ReferenceRestoreReport | backups.RestoreReport,
)
async def import_memories(
    body: ImportRequest | backups.ExportDocument | backups.ReferenceExport,
    backends: BackendsDep,
    dry_run: Annotated[
        bool, Query(description="Export documents only: report, change nothing.")
    ] = False,
    namespace: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=NAMESPACE_MAX,
            pattern=NAMESPACE_PATTERN,
            description="The reference product's export only: put everything in this namespace "
            "(by default each row keeps its own, `default` when it has none).",
        ),
    ] = None,
) -> Any:
    """Many memories in one call (embedded in batches). Per-item results; a bad item fails
    alone. Duplicates count as imported (`dedup_action: skipped`). An export document (GET
    /api/export) is restored exactly instead (see docs/backup.md), and so is the reference
    product's version 1 JSON export, converted first (see docs/migrating.md)."""
    if isinstance(body, backups.ReferenceExport):
        return await backups.restore_reference(backends, body, namespace=namespace, dry_run=dry_run)
    if isinstance(body, backups.ExportDocument):
        return await backups.restore_export(backends, body, dry_run=dry_run)
    if dry_run:
        # A list of new memories has no dry run: refused, so a preview never writes.
        raise InvalidArgument(
            "dry_run previews export documents only; a list of new memories is imported "
            "as sent: send it without dry_run",
            field="dry_run",
        )
    limit = backends.settings.max_import_batch
    if len(body.memories) > limit:
        raise InvalidArgument(
            f"at most {limit} memories per import request; split the import", field="memories"
        )
    reply: ingest_pb2.ImportMemoriesResponse = await backends.ingest.ImportMemories(
        ingest_pb2.ImportMemoriesRequest(memories=[_store_request(m) for m in body.memories]),
        timeout=max(backends.settings.rpc_timeout_seconds, 300.0),
    )
    results = [
        {
            "index": r.index,
            "id": r.id or None,
            "dedup_action": r.dedup_action,
            "error": r.error or None,
            "field": r.field or None,
        }
        for r in reply.results
    ]
    errors = [f"memories.{r.index}: {r.error}" for r in reply.results if r.error][:10]
    # Read-your-writes, as for a single store: new memories are searchable before the reply
    # (bounded wait). Merged or skipped items point at memories that were searchable already.
    new_ids = [r.id for r in reply.results if r.dedup_action in ("created", "superseded")]
    indexed = await _await_new(backends, new_ids)
    return {
        "indexed": indexed,
        "imported": reply.imported,
        "failed": reply.failed,
        "errors": errors,
        "results": results,
    }


@router.post("/bulk-tag", response_model=BulkResult)
async def bulk_tag(body: BulkTag, backends: BackendsDep) -> dict[str, Any]:
    reply: ingest_pb2.BulkResponse = await backends.ingest.BulkTag(
        ingest_pb2.BulkTagRequest(
            ids=body.ids, add_tags=body.add_tags, remove_tags=body.remove_tags
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {"ok": True, "affected": reply.affected, "missing_ids": list(reply.missing_ids)}


@router.post("/bulk-update", response_model=BulkResult)
async def bulk_update(body: BulkUpdate, backends: BackendsDep) -> dict[str, Any]:
    request = ingest_pb2.BulkUpdateRequest(ids=body.ids)
    for name in ("importance", "valence", "is_active"):
        if getattr(body, name) is not None:
            setattr(request, name, getattr(body, name))
    reply: ingest_pb2.BulkResponse = await backends.ingest.BulkUpdate(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return {"ok": True, "affected": reply.affected, "missing_ids": list(reply.missing_ids)}


def _check_import_path(
    root: PurePath | None, raw: str, field: str, refusal: str = SEND_CONTENT
) -> None:
    """A path a request names: refused unless the operator set an import folder and the path
    stays inside it. Ingest, which reads the file, checks again after resolving links."""
    if root is None:
        raise HTTPException(400, {"detail": refusal, "field": field})
    try:
        relative_import_path(root, raw, field=field)
    except InvalidArgument as exc:
        raise HTTPException(400, {"detail": exc.message, "field": field}) from exc


@router.post("/ingest", response_model=IngestResponse)
async def ingest_markdown(body: IngestRequest, backends: BackendsDep) -> dict[str, Any]:
    """Markdown files split into memories at `##` headers. Re-ingesting a path replaces its
    memories: unchanged sections stay, changed or removed ones are archived."""
    for i, f in enumerate(body.files):
        if f.path is not None:
            _check_import_path(backends.settings.import_root, f.path, f"files.{i}.path")
    request = ingest_pb2.IngestMarkdownRequest(
        files=[
            ingest_pb2.MarkdownFile(source_uri=f.path or f.name or "", content=f.content or "")
            for f in body.files
        ],
        namespace=body.namespace,
        tags=body.tags,
        content_type=body.content_type,
    )
    if body.importance is not None:
        request.importance = body.importance
    reply: ingest_pb2.IngestMarkdownResponse = await backends.ingest.IngestMarkdown(
        request, timeout=max(backends.settings.rpc_timeout_seconds, 300.0)
    )
    # Read-your-writes, as for a single store: an agent ingests a file, then searches it.
    indexed = await _await_new(backends, [i for f in reply.files for i in f.memory_ids])
    return {
        "indexed": indexed,
        "files": [
            {
                "name": f.source_uri,
                "sections": f.sections,
                "stored": f.stored,
                "unchanged": f.unchanged,
                "replaced": f.replaced,
                "memory_ids": list(f.memory_ids),
            }
            for f in reply.files
        ],
        "stored": reply.stored,
        "replaced": reply.replaced,
    }


@router.post("/digest-session", status_code=status.HTTP_201_CREATED, response_model=DigestResponse)
async def digest_session(body: DigestRequest, backends: BackendsDep) -> dict[str, Any]:
    """Summarise a coding-agent transcript (JSONL) into one memory."""
    if body.transcript_path is not None:
        if body.transcript is not None:
            raise HTTPException(
                400, {"detail": "give `transcript` or `transcript_path`, not both", "field": ""}
            )
        _check_import_path(
            backends.settings.import_root, body.transcript_path, "transcript_path", SEND_TRANSCRIPT
        )
    request = ingest_pb2.DigestSessionRequest(
        transcript=body.transcript or "",
        transcript_path=body.transcript_path or "",
        namespace=body.namespace,
        tags=body.tags,
        attribution=common_pb2.Attribution(
            **{
                k: v
                for k in ("agent", "session_id", "model_id", "provider")
                if (v := getattr(body, k)) is not None
            }
        ),
    )
    if body.project is not None:
        request.project = body.project
    reply: ingest_pb2.DigestSessionResponse = await backends.ingest.DigestSession(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return {
        "memory": _stored(reply.stored, await _await_indexed(backends, reply.stored.memory)),
        "project": reply.project or None,
        "actions": reply.actions,
        "files_changed": reply.files_changed,
        "commands": reply.commands,
    }


@router.patch("/{memory_id}", response_model=UpdatedMemory, responses=NOT_FOUND)
async def update_memory(
    body: MemoryUpdate, backends: BackendsDep, memory_id: str = ID_PATH
) -> dict[str, Any]:
    """Change fields of a memory. New content is re-stripped, re-hashed, re-embedded and
    re-chunked; `is_active: false` moves it to the trash."""
    given = body.model_fields_set
    request = ingest_pb2.UpdateMemoryRequest(id=memory_id)
    for name in ("content", "content_type", "importance", "valence", "is_active", "is_metadata"):
        if name in given and getattr(body, name) is not None:
            setattr(request, name, getattr(body, name))
    for name in ("namespace", "source_uri"):
        if name in given and getattr(body, name) is not None:
            setattr(request, name, getattr(body, name))
    if "tags" in given:
        request.tags.values.extend(body.tags or [])
    if "metadata" in given and body.metadata is not None:
        request.metadata_patch_json = json.dumps(body.metadata)
    if "expires_at" in given and body.expires_at is not None:
        request.expires_at.CopyFrom(stamp(body.expires_at))
    for name in convert.ATTRIBUTION_FIELDS:
        if name in given and getattr(body, name) is not None:
            setattr(request.attribution, name, getattr(body, name))
    for name in ("expires_at", "source_uri", *convert.ATTRIBUTION_FIELDS):
        if name in given and getattr(body, name) is None:
            request.clear_fields.append(name)
    reply: ingest_pb2.MemoryReply = await backends.ingest.UpdateMemory(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    out = convert.memory(reply.memory)
    out["indexed"] = await _await_indexed(backends, reply.memory)
    return out


@router.delete("/{memory_id}", response_model=Deleted, responses=NOT_FOUND)
async def delete_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    """Permanently delete a memory with its chunks, tags, links and entity mentions. To keep
    it recoverable, PATCH `is_active: false` (archive) instead."""
    reply: ingest_pb2.DeleteMemoryResponse = await backends.ingest.DeleteMemory(
        ingest_pb2.MemoryRef(id=memory_id), timeout=backends.settings.rpc_timeout_seconds
    )
    return {"ok": True, "id": reply.id, "chunks_deleted": reply.chunks_deleted}


@router.post("/{memory_id}/archive", response_model=UpdatedMemory, responses=NOT_FOUND)
async def archive_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    reply: ingest_pb2.MemoryReply = await backends.ingest.ArchiveMemory(
        ingest_pb2.MemoryRef(id=memory_id), timeout=backends.settings.rpc_timeout_seconds
    )
    out = convert.memory(reply.memory)
    out["indexed"] = await _await_indexed(backends, reply.memory)
    return out


@router.post("/{memory_id}/restore", response_model=UpdatedMemory, responses=NOT_FOUND)
async def restore_memory(backends: BackendsDep, memory_id: str = ID_PATH) -> dict[str, Any]:
    """Bring an archived memory back (409 if it is active, or if an active memory now has the
    same content)."""
    reply: ingest_pb2.MemoryReply = await backends.ingest.RestoreMemory(
        ingest_pb2.MemoryRef(id=memory_id), timeout=backends.settings.rpc_timeout_seconds
    )
    out = convert.memory(reply.memory)
    out["ok"] = True
    out["indexed"] = await _await_indexed(backends, reply.memory)
    return out


@router.post(
    "/{memory_id}/links",
    status_code=status.HTTP_201_CREATED,
    response_model=LinkOut,
    responses=NOT_FOUND,
)
async def create_link(
    body: LinkCreate, backends: BackendsDep, memory_id: str = ID_PATH
) -> dict[str, Any]:
    """Link this memory to another (created, or type and strength overwritten)."""
    link: ingest_pb2.Link = await backends.ingest.CreateLink(
        ingest_pb2.CreateLinkRequest(
            source_id=memory_id,
            target_id=body.target_id,
            link_type=body.link_type,
            strength=body.strength,
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {
        "source_id": link.source_id,
        "target_id": link.target_id,
        "link_type": link.link_type,
        "strength": link.strength,
        "created_at": link.created_at.ToDatetime(tzinfo=UTC),
    }


@router.delete("/{memory_id}/links/{target_id}", response_model=LinkDeleted, responses=NOT_FOUND)
async def delete_link(
    backends: BackendsDep,
    memory_id: str = ID_PATH,
    target_id: str = Path(min_length=1, max_length=ID_MAX, description="The linked memory's id"),
) -> dict[str, Any]:
    """Remove the link between two memories, whichever way it points."""
    reply: ingest_pb2.DeleteLinkResponse = await backends.ingest.DeleteLink(
        ingest_pb2.DeleteLinkRequest(source_id=memory_id, target_id=target_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {"ok": True, "deleted": reply.deleted}
