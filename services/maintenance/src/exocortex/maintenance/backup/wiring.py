"""Builds the backup service, registers its servicer and starts the backup schedule."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import grpc

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.config import CommonSettings
from exocortex.core.logging import get_logger
from exocortex.core.rpc.client import open_channel
from exocortex.maintenance.backup.obsidian import ObsidianExporter
from exocortex.maintenance.backup.obsidian_repository import ObsidianRepository
from exocortex.maintenance.backup.repository import BackupLock, Pool, max_count
from exocortex.maintenance.backup.restore import Restorer
from exocortex.maintenance.backup.schedule import run_schedule
from exocortex.maintenance.backup.service import BackupService, DeepVerifier
from exocortex.maintenance.backup.servicer import BackupServicer
from exocortex.maintenance.backup.settings import BackupSettings
from exocortex.maintenance.clients import ExportSource
from exocortex.maintenance.scheduler.scheduler import check_cron
from exocortex.proto.v1 import backup_pb2_grpc

log = get_logger(__name__)


def registration(
    servicer: BackupServicer,
) -> tuple[Callable[[Any, grpc.aio.Server], None], Any, str]:
    return backup_pb2_grpc.add_BackupServicer_to_server, servicer, "exocortex.v1.Backup"


def attach(
    stack: AsyncExitStack,
    servicer: BackupServicer,
    pool: Pool,
    settings: CommonSettings,
    stop: asyncio.Event,
) -> None:
    """Gives the servicer its service, and runs the schedule until ``stop`` (read once here:
    EXO_BACKUP_PASSPHRASE, EXO_BACKUP_SCHEDULE, EXO_BACKUP_OBSIDIAN_VAULT; how many scheduled
    backups to keep is the `backup.max_count` setting, read at each backup)."""
    backup = BackupSettings()
    if backup.schedule:
        check_cron(backup.schedule)  # a bad expression stops the start with its name
    channel = open_channel(settings.retrieval_addr)
    stack.push_async_callback(channel.close)
    embedding = open_channel(settings.embedding_addr)
    stack.push_async_callback(embedding.close)
    vault = backup.obsidian_vault or settings.data_dir / "obsidian"
    embedder = EmbeddingClient(embedding, timeout=300.0)
    service = BackupService(
        ExportSource(channel),
        settings.data_dir,
        backup,
        ObsidianExporter(ObsidianRepository(pool), vault),
        Restorer(pool, embedder, max_content_chars=backup.max_content_chars),
        DeepVerifier(settings.database_url, embedder, max_content_chars=backup.max_content_chars),
        keep=functools.partial(max_count, pool),
    )
    servicer.attach(service)
    if not backup.schedule:
        log.info("scheduled backups are off (EXO_BACKUP_SCHEDULE is empty)")
        return
    task = asyncio.create_task(
        run_schedule(service, BackupLock(pool), backup.schedule, stop), name="backup-schedule"
    )

    async def finish() -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    stack.push_async_callback(finish)
