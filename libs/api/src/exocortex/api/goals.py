"""Goals with their milestones and progress log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.base import Namespace
from exocortex.api.limits import (
    GOAL_DESCRIPTION_MAX,
    GOAL_TITLE_MAX,
    MILESTONE_ORDER_MAX,
    PROGRESS_MAX,
    TAGS_MAX,
)
from exocortex.api.memories import Memory
from exocortex.api.vocabulary import DedupAction, GoalStatus, MilestoneStatus, Priority


class Milestone(BaseModel):
    id: str
    goal_id: str
    title: str
    status: MilestoneStatus
    order: int
    deadline: datetime | None = None
    completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime


class Goal(BaseModel):
    id: str
    namespace: str
    title: str
    description: str | None = None
    status: GoalStatus
    priority: Priority
    deadline: datetime | None = None
    metadata: dict[str, Any]
    completed_at: datetime | None = None
    created_at: datetime
    updated_at: datetime
    milestones: list[Milestone] = Field(description="Ordered by `order`.")
    progress: list[Memory] = Field(
        default_factory=list,
        description="Progress notes, newest first (only on GET /api/goals/{id}).",
    )
    progress_count: int = Field(description="How many memories are linked to the goal.")


class GoalList(BaseModel):
    results: list[Goal]
    count: int


class GoalCreate(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "title": "Ship the v1 dashboard",
                    "description": "Memories, goals and graph pages",
                    "priority": "high",
                    "deadline": "2026-12-31T00:00:00Z",
                }
            ]
        },
    )

    title: str = Field(min_length=1, max_length=GOAL_TITLE_MAX)
    description: str | None = Field(default=None, max_length=GOAL_DESCRIPTION_MAX)
    status: GoalStatus = "active"
    priority: Priority = "medium"
    deadline: datetime | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    namespace: str = Namespace


class GoalPatch(BaseModel):
    """Only the fields sent change. `null` clears `description` and `deadline`; `metadata` is
    merged key by key and a `null` value removes that key. `status: completed` sets
    `completed_at`; any other status clears it."""

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"status": "completed"}, {"deadline": None}]},
    )

    title: str | None = Field(default=None, min_length=1, max_length=GOAL_TITLE_MAX)
    description: str | None = Field(default=None, max_length=GOAL_DESCRIPTION_MAX)
    status: GoalStatus | None = None
    priority: Priority | None = None
    deadline: datetime | None = None
    metadata: dict[str, Any] | None = None


class ProgressCreate(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"content": "Finished the goals page", "importance": 0.6}]},
    )

    content: str = Field(min_length=1, max_length=PROGRESS_MAX)
    importance: float | None = Field(default=None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)


class ProgressMemory(Memory):
    dedup_action: DedupAction
    indexed: bool


class ProgressLogged(BaseModel):
    memory: ProgressMemory
    goal: Goal


class MilestoneCreate(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"title": "Design review", "order": 0}]},
    )

    title: str = Field(min_length=1, max_length=GOAL_TITLE_MAX)
    order: int | None = Field(default=None, ge=0, le=MILESTONE_ORDER_MAX)
    deadline: datetime | None = None
    status: MilestoneStatus = "pending"


class MilestonePatch(BaseModel):
    """Only the fields sent change; `deadline: null` clears it."""

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"status": "completed"}]},
    )

    title: str | None = Field(default=None, min_length=1, max_length=GOAL_TITLE_MAX)
    status: MilestoneStatus | None = None
    order: int | None = Field(default=None, ge=0, le=MILESTONE_ORDER_MAX)
    deadline: datetime | None = None
