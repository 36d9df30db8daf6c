"""gRPC ↔ backup service."""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeAlias

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.errors import Unavailable
from exocortex.maintenance.backup.files import BackupEntry
from exocortex.maintenance.backup.restore import RestoreReport
from exocortex.maintenance.backup.service import BackupService, require_every_namespace
from exocortex.proto.v1 import backup_pb2, backup_pb2_grpc

Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


def _stamp(value: datetime | None) -> Timestamp | None:
    if value is None:
        return None
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _file(entry: BackupEntry) -> backup_pb2.BackupFile:
    return backup_pb2.BackupFile(
        name=entry.name,
        size_bytes=entry.size_bytes,
        created_at=_stamp(entry.created_at),
        scheduled=entry.scheduled,
        counts=entry.counts,
    )


def _restore_report(report: RestoreReport) -> backup_pb2.RestoreReport:
    return backup_pb2.RestoreReport(
        dry_run=report.dry_run,
        sections={
            name: backup_pb2.SectionOutcome(
                created=r.created, skipped=r.skipped, conflict=r.conflict, updated=r.updated
            )
            for name, r in report.sections.items()
        },
        items=[
            backup_pb2.ItemOutcome(section=i.section, key=i.key, outcome=i.outcome, reason=i.reason)
            for i in report.items
        ],
    )


class BackupServicer(backup_pb2_grpc.BackupServicer):
    """Registered before the pool opens; the service is attached once it can work."""

    def __init__(self) -> None:
        self._attached: BackupService | None = None

    def attach(self, service: BackupService) -> None:
        self._attached = service

    @property
    def _service(self) -> BackupService:
        require_every_namespace()
        if self._attached is None:
            raise Unavailable("backups are starting; try again in a moment")
        return self._attached

    async def CreateBackup(
        self, request: backup_pb2.CreateBackupRequest, context: Context
    ) -> backup_pb2.BackupFile:
        entry = await self._service.create(
            request.passphrase, include_embeddings=request.include_embeddings
        )
        return _file(entry)

    async def ListBackups(
        self, request: backup_pb2.ListBackupsRequest, context: Context
    ) -> backup_pb2.ListBackupsResponse:
        return backup_pb2.ListBackupsResponse(backups=[_file(e) for e in self._service.list()])

    async def VerifyBackup(
        self, request: backup_pb2.VerifyBackupRequest, context: Context
    ) -> backup_pb2.VerifyBackupReport:
        report = await self._service.verify(request.name, request.passphrase, deep=request.deep)
        return backup_pb2.VerifyBackupReport(
            name=report.name,
            ok=report.ok,
            counts=report.counts,
            problems=report.problems,
            format_version=report.format_version,
            exported_at=_stamp(report.exported_at),
            deep=report.deep,
            restored_counts=report.restored_counts or {},
        )

    async def RestoreBackup(
        self, request: backup_pb2.RestoreBackupRequest, context: Context
    ) -> backup_pb2.RestoreReport:
        report = await self._service.restore(
            request.name, request.passphrase, dry_run=request.dry_run
        )
        return _restore_report(report)

    async def RestoreExport(
        self, request: backup_pb2.RestoreExportRequest, context: Context
    ) -> backup_pb2.RestoreReport:
        report = await self._service.restore_document(
            request.document_json, dry_run=request.dry_run
        )
        return _restore_report(report)

    async def ExportObsidian(
        self, request: backup_pb2.ExportObsidianRequest, context: Context
    ) -> backup_pb2.ExportObsidianReport:
        report = await self._service.obsidian(full=request.full)
        return backup_pb2.ExportObsidianReport(
            vault=report.vault,
            memories_written=report.memories_written,
            entities_written=report.entities_written,
            goals_written=report.goals_written,
            contradictions_written=report.contradictions_written,
            incremental=report.incremental,
        )
