"""Backup files in ``<data_dir>/backups``: their names, listing and the retention of scheduled
ones. A name is checked against the pattern before any path is built from it."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from exocortex.core.domain.safe_paths import UnsafeName, safe_child
from exocortex.core.errors import InvalidArgument, NotFound

SUFFIX = ".exobak"
_NAME = re.compile(r"^exocortex-(\d{8}T\d{6}(?:\d{6})?Z)(-scheduled)?\.exobak$")


@dataclass(frozen=True, slots=True)
class BackupEntry:
    name: str
    size_bytes: int
    created_at: datetime
    scheduled: bool
    counts: dict[str, int]


def new_name(now: datetime, *, scheduled: bool) -> str:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"exocortex-{stamp}{'-scheduled' if scheduled else ''}{SUFFIX}"


def parse(name: str) -> tuple[datetime, bool] | None:
    match = _NAME.match(name)
    if match is None:
        return None
    stamp = match.group(1)
    fmt = "%Y%m%dT%H%M%S%fZ" if len(stamp) > 16 else "%Y%m%dT%H%M%SZ"
    return datetime.strptime(stamp, fmt).replace(tzinfo=UTC), match.group(2) is not None


def path_of(folder: Path, name: str) -> Path:
    if parse(name) is None:
        raise InvalidArgument(
            "name must be a backup file name from the list (exocortex-<time>.exobak)",
            field="name",
        )
    try:
        # The pattern already keeps the name to one component; this also refuses a link
        # planted in the folder that leads out of it.
        path = safe_child(folder, name)
    except UnsafeName as err:
        raise InvalidArgument(str(err), field="name") from err
    if not path.is_file():
        raise NotFound(f"no backup named {name!r}", field="name")
    return path


def listing(folder: Path) -> list[BackupEntry]:
    """Newest first."""
    entries = []
    if folder.is_dir():
        for path in folder.iterdir():
            parsed = parse(path.name)
            if parsed is None or not path.is_file():
                continue
            entries.append(BackupEntry(path.name, path.stat().st_size, *parsed, {}))
    entries.sort(key=lambda e: e.created_at, reverse=True)
    return entries


def expired(folder: Path, keep: int) -> list[Path]:
    """Scheduled backups beyond the newest ``keep``; backups made on request are kept."""
    scheduled = [e for e in listing(folder) if e.scheduled]
    return [folder / e.name for e in scheduled[keep:]]


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
