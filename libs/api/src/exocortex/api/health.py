"""The gateway's health report."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel


class DependencyState(BaseModel):
    # starting: the service answers but is not ready yet (waiting for Postgres or its model).
    status: Literal["ok", "starting", "down"]
    detail: str | None = None


class Health(BaseModel):
    status: Literal["ok", "degraded"]
    db: Literal["connected", "disconnected"]
    uptime: float
    timestamp: datetime
    dependencies: dict[str, DependencyState]
