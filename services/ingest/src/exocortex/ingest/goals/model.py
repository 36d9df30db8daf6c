"""What the goal service takes and gives, in domain terms (no protobuf)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exocortex.core.records import MemoryRecord
from exocortex.ingest.store.model import Row


@dataclass
class GoalView:
    goal: Row
    milestones: list[Row] = field(default_factory=list)
    progress: list[MemoryRecord] = field(default_factory=list)
    progress_count: int = 0


@dataclass
class GoalChanges:
    """A partial update: only attributes that are not None change; ``clear`` nulls fields."""

    title: str | None = None
    description: str | None = None
    status: str | None = None
    priority: str | None = None
    deadline: datetime | None = None
    metadata: dict[str, Any] | None = None
    clear: tuple[str, ...] = ()


@dataclass
class MilestoneChanges:
    title: str | None = None
    status: str | None = None
    order: int | None = None
    deadline: datetime | None = None
    clear: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProgressNote:
    """A step logged on a goal: stored as a memory of its own, linked to the goal."""

    goal_id: str
    content: str
    tags: tuple[str, ...] = ()
    importance: float | None = None
