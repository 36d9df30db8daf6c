"""Scheduled backups and their retention (EXO_BACKUP_SCHEDULE, the `backup.max_count` setting): a
maintenance process of its own fires a backup every two seconds (a cron expression with a seconds
field), keeps the newest scheduled ones only, and never removes a backup made on request."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from exocortex.core.rpc.client import open_channel
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.backup.service import verify_file
from exocortex.proto.v1 import backup_pb2, backup_pb2_grpc
from exocortex.testing.processes import listening_process

PASS = "scheduled backups passphrase"
KEEP = 2


@pytest.fixture
def scheduled(
    exo_stack: Stack, database_url: str, nats_url: str, tmp_path: Path
) -> Iterator[tuple[str, Path, Path]]:
    """(address, backups folder, log) of a maintenance process on a fresh database whose
    backups read the session stack's export."""
    port = free_port()
    log = tmp_path / "maintenance.log"
    # Not the default (7): retention follows the stored setting.
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE settings SET value = %s WHERE key = 'backup.max_count'", (str(KEEP),))
    env = exo_stack.env() | {
        "EXO_DATABASE_URL": database_url,
        "EXO_NATS_URL": nats_url,
        "EXO_DATA_DIR": str(tmp_path),
        "EXO_MAINTENANCE_LISTEN": f"127.0.0.1:{port}",
        "EXO_MAINTENANCE_METRICS_PORT": str(free_port()),
        "EXO_MAINTENANCE_SCHEDULER": "false",
        "EXO_BACKUP_PASSPHRASE": PASS,
        "EXO_BACKUP_SCHEDULE": "* * * * * */2",
        "EXO_LOG_FORMAT": "json",
    }
    with listening_process(
        [sys.executable, "-m", "exocortex.maintenance"],
        env,
        port,
        what="a maintenance process with scheduled backups",
        log_path=log,
    ):
        yield f"127.0.0.1:{port}", tmp_path / "backups", log


async def test_scheduled_backups_keep_the_newest_and_spare_those_made_on_request(
    scheduled: tuple[str, Path, Path],
) -> None:
    address, folder, log = scheduled
    channel = open_channel(address)
    try:
        stub = backup_pb2_grpc.BackupStub(channel)
        # On request, with the configured passphrase (none in the request).
        asked = await stub.CreateBackup(backup_pb2.CreateBackupRequest(), timeout=120)
    finally:
        await channel.close()
    assert asked.scheduled is False

    # Wait (bounded) until retention has removed two scheduled backups: at least KEEP + 2 made.
    deadline = asyncio.get_running_loop().time() + 120
    while log.read_text().count("old scheduled backup removed") < 2:
        assert asyncio.get_running_loop().time() < deadline, log.read_text()[-3000:]
        await asyncio.sleep(0.2)

    names = sorted(p.name for p in folder.glob("*.exobak"))
    kept = [n for n in names if n.endswith("-scheduled.exobak")]
    assert asked.name in names  # never removed by retention
    # KEEP, or KEEP + 1 when the next fire has written its file and not yet pruned.
    assert KEEP <= len(kept) <= KEEP + 1, names
    removed = [
        json.loads(line)["name"]
        for line in log.read_text().splitlines()
        if "old scheduled backup removed" in line
    ]
    assert len(kept) + len(removed) >= KEEP + 2
    # What is kept is the newest (names sort by time), and a whole, readable backup.
    assert max(removed) < min(kept), (removed, kept)
    assert verify_file(folder / kept[-1], PASS).ok
