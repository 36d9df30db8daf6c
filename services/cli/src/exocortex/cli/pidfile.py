"""The record a running ``exo up`` keeps in its data folder, so ``exo status`` and ``exo down``
find a stack started in the background (or in another terminal)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from exocortex.core.config import DEFAULT_DATA_DIR
from exocortex.core.runtime.processes import process_alive

PID_FILE = "exo.pid"


@dataclass(frozen=True)
class Running:
    pid: int
    url: str
    mcp_url: str
    log_dir: str
    started_at: str
    # Each part's Prometheus endpoint by part name (a record from an older exo has none).
    metrics: dict[str, str] = field(default_factory=dict)


def data_dir() -> Path:
    return Path(os.environ.get("EXO_DATA_DIR") or DEFAULT_DATA_DIR).expanduser()


def path(folder: Path | None = None) -> Path:
    return (folder or data_dir()) / PID_FILE


def write(record: Running, folder: Path) -> None:
    target = path(folder)
    temporary = target.with_suffix(".tmp")
    temporary.write_text(json.dumps(asdict(record)), encoding="utf-8")
    temporary.replace(target)


def read(folder: Path | None = None) -> Running | None:
    """The running stack, or None (a record whose process is gone is removed)."""
    target = path(folder)
    try:
        record = Running(**json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
    if not process_alive(record.pid):
        target.unlink(missing_ok=True)
        return None
    return record


def remove(folder: Path, pid: int) -> None:
    """Removes the record only if it is this process's (a newer stack may have written it)."""
    current = path(folder)
    try:
        if json.loads(current.read_text(encoding="utf-8")).get("pid") == pid:
            current.unlink()
    except (OSError, ValueError):
        pass
