"""Encrypted backups in the data folder, their verification, and the Obsidian vault export
(served by maintenance's Backup RPCs). Backups hold every namespace: these routes need a key
that may use every namespace."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, status
from google.protobuf.json_format import MessageToDict

from exocortex.api.backup import (
    BackupFile,
    BackupList,
    CreateBackup,
    ExportDocument,
    ObsidianReport,
    ObsidianRequest,
    ReferenceExport,
    ReferenceRestoreReport,
    RestoreReport,
    RestoreRequest,
    VerifyReport,
    VerifyRequest,
)
from exocortex.api.limits import BACKUP_NAME_MAX, BACKUP_NAME_PATTERN
from exocortex.core.errors import InvalidArgument
from exocortex.core.reference import convert as reference
from exocortex.core.reference.sources import ReferenceError, read_backup_v1
from exocortex.gateway.backends import Backends
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import backup_pb2, backup_pb2_grpc

# The memories router's import route restores an export document through this module.
__all__ = [
    "ExportDocument",
    "ReferenceExport",
    "ReferenceRestoreReport",
    "RestoreReport",
    "restore_export",
    "restore_reference",
    "router",
]

router = APIRouter(tags=["backups"])

# Encrypting a large store takes a while; the call is allowed longer than a read.
BACKUP_TIMEOUT_SECONDS = 3600.0
BackupName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=BACKUP_NAME_MAX,
        pattern=BACKUP_NAME_PATTERN,
        description="A backup file name from GET /api/backups.",
    ),
]


def _stub(backends: Backends) -> backup_pb2_grpc.BackupStub:
    return backup_pb2_grpc.BackupStub(backends.channels["maintenance"])


def _file(reply: backup_pb2.BackupFile) -> dict[str, Any]:
    return {
        "name": reply.name,
        "size_bytes": reply.size_bytes,
        "created_at": reply.created_at.ToDatetime().isoformat() + "Z",
        "scheduled": reply.scheduled,
        "counts": dict(reply.counts),
    }


@router.post("/api/backups", status_code=status.HTTP_201_CREATED, response_model=BackupFile)
async def create_backup(backends: BackendsDep, body: CreateBackup | None = None) -> Any:
    """Writes an encrypted backup of the whole store (AES-256-GCM, key from the passphrase by
    scrypt) into `<data dir>/backups`. See docs/backup.md for the file format."""
    body = body or CreateBackup()
    request = backup_pb2.CreateBackupRequest(
        passphrase=body.passphrase or "", include_embeddings=body.include_embeddings
    )
    reply = await _stub(backends).CreateBackup(request, timeout=BACKUP_TIMEOUT_SECONDS)
    return _file(reply)


@router.get("/api/backups", response_model=BackupList)
async def list_backups(backends: BackendsDep) -> Any:
    """The backups in the data folder, newest first."""
    reply = await _stub(backends).ListBackups(
        backup_pb2.ListBackupsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    return {"backups": [_file(b) for b in reply.backups]}


@router.post("/api/backups/{name}/verify", response_model=VerifyReport)
async def verify_backup(
    backends: BackendsDep, name: BackupName, body: VerifyRequest | None = None
) -> Any:
    """Decrypts the whole backup, checking every chunk's tag, and compares each section's
    count and checksum with the manifest inside. With `deep`, also restores it into a scratch
    database of the same Postgres (always dropped after) and compares each section's rows with
    the backup; 409 when the database role may not create that database. `ok` is false with
    the problems listed."""
    body = body or VerifyRequest()
    request = backup_pb2.VerifyBackupRequest(
        name=name, passphrase=body.passphrase or "", deep=body.deep
    )
    reply = await _stub(backends).VerifyBackup(request, timeout=BACKUP_TIMEOUT_SECONDS)
    report = MessageToDict(reply, preserving_proto_field_name=True)
    return {
        "name": reply.name,
        "ok": reply.ok,
        "format_version": reply.format_version,
        "exported_at": report.get("exported_at"),
        "counts": dict(reply.counts),
        "problems": list(reply.problems),
        "deep": reply.deep,
        "restored_counts": dict(reply.restored_counts) if reply.deep else None,
    }


def _restore_body(reply: backup_pb2.RestoreReport) -> dict[str, Any]:
    return {
        "dry_run": reply.dry_run,
        "sections": {
            key: {
                "created": s.created,
                "skipped": s.skipped,
                "conflict": s.conflict,
                "updated": s.updated,
            }
            for key, s in reply.sections.items()
        },
        "items": [
            {"section": i.section, "key": i.key, "outcome": i.outcome, "reason": i.reason}
            for i in reply.items
        ],
    }


async def restore_export(backends: Backends, body: ExportDocument, *, dry_run: bool) -> Any:
    """POST /api/memories/import with an export document: restored exactly, as a backup is."""
    request = backup_pb2.RestoreExportRequest(document_json=body.model_dump_json(), dry_run=dry_run)
    reply = await _stub(backends).RestoreExport(request, timeout=BACKUP_TIMEOUT_SECONDS)
    return _restore_body(reply)


async def restore_reference(
    backends: Backends, body: ReferenceExport, *, namespace: str | None, dry_run: bool
) -> Any:
    """POST /api/memories/import with the reference product's version 1 export: converted to
    an export document (docs/migrating.md), then restored exactly as one is."""
    try:
        conversion = reference.to_export(read_backup_v1(body.model_dump()), namespace=namespace)
    except ReferenceError as exc:
        raise InvalidArgument(f"not a readable reference export: {exc}") from None
    document = ExportDocument.model_validate(conversion.document)
    report = await restore_export(backends, document, dry_run=dry_run)
    left_out = [{"kind": x.kind, "count": x.count, "reason": x.reason} for x in conversion.left_out]
    if conversion.ai_settings:
        left_out.append(
            {
                "kind": "settings",
                "count": len(conversion.ai_settings),
                "reason": "ai.* (the LLM provider and key): set them with PATCH /api/settings "
                "or `exo import --with-api-key`",
            }
        )
    return {**report, "left_out": left_out}


@router.post("/api/backups/{name}/restore", response_model=RestoreReport)
async def restore_backup(
    backends: BackendsDep, name: BackupName, body: RestoreRequest | None = None
) -> Any:
    """Restores the backup exactly (ids, versions, timestamps, tags, usage counts, links,
    entities, goals, contradictions, consolidations, settings but masked secrets), after
    verifying the whole file. One transaction per batch of 500; a row already present is
    skipped (a different version of it is a conflict, left as it is), so a second restore
    changes nothing. Memories are embedded again by the current model."""
    body = body or RestoreRequest()
    request = backup_pb2.RestoreBackupRequest(
        name=name, passphrase=body.passphrase or "", dry_run=body.dry_run
    )
    reply = await _stub(backends).RestoreBackup(request, timeout=BACKUP_TIMEOUT_SECONDS)
    return _restore_body(reply)


@router.post("/api/export/obsidian", response_model=ObsidianReport)
async def export_obsidian(backends: BackendsDep, body: ObsidianRequest | None = None) -> Any:
    """Writes the Obsidian vault (default `<data dir>/obsidian`): a note per memory with YAML
    front matter and wikilinks, per entity, goal and contradiction, and a Dataview dashboard.
    Only what changed since the last export, unless `full`."""
    request = backup_pb2.ExportObsidianRequest(full=bool(body and body.full))
    reply = await _stub(backends).ExportObsidian(request, timeout=BACKUP_TIMEOUT_SECONDS)
    return MessageToDict(
        reply, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
