"""Scheduled backups: at each fire time of ``EXO_BACKUP_SCHEDULE`` (cron, UTC), one encrypted
backup, then the retention of scheduled ones. Fire times come from the maintenance scheduler's
cron helper. With several maintenance processes, a Postgres advisory lock lets one of them
write the backup."""

from __future__ import annotations

import asyncio
from contextlib import suppress
from datetime import UTC, datetime

from exocortex.core.logging import get_logger
from exocortex.maintenance.backup.repository import BackupLock
from exocortex.maintenance.backup.service import BackupService
from exocortex.maintenance.scheduler.scheduler import check_cron, next_fire

log = get_logger(__name__)


async def run_schedule(
    service: BackupService, lock: BackupLock, expression: str, stop: asyncio.Event
) -> None:
    check_cron(expression)
    while not stop.is_set():
        fire = next_fire(expression, datetime.now(UTC))
        delay = max(0.0, (fire - datetime.now(UTC)).total_seconds())
        with suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=delay)
            return
        try:
            async with lock.held() as mine:
                if mine:
                    await service.scheduled()
        except Exception as exc:  # the next fire tries again; the error is in the log
            log.error("scheduled backup failed", error=str(exc) or type(exc).__name__)
