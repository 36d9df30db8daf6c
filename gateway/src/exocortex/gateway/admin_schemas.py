"""Request and response bodies of the goal, entity-edit, settings, export and chat routes."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from exocortex.gateway.schemas import Memory

GoalStatus = Literal["active", "completed", "stalled", "abandoned"]
Priority = Literal["low", "medium", "high", "critical"]
MilestoneStatus = Literal["pending", "in_progress", "completed"]
EntityType = Literal["person", "project", "technology", "organization", "concept"]
Namespace = Field(
    default="default", min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$"
)


class Ok(BaseModel):
    ok: bool = True


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

    title: str = Field(min_length=1, max_length=500)
    description: str | None = Field(default=None, max_length=20_000)
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

    title: str | None = Field(default=None, min_length=1, max_length=500)
    description: str | None = Field(default=None, max_length=20_000)
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

    content: str = Field(min_length=1, max_length=200_000)
    importance: float | None = Field(default=None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list, max_length=50)


class ProgressMemory(Memory):
    dedup_action: Literal["created", "skipped", "superseded", "merged"]
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

    title: str = Field(min_length=1, max_length=500)
    order: int | None = Field(default=None, ge=0, le=1_000_000)
    deadline: datetime | None = None
    status: MilestoneStatus = "pending"


class MilestonePatch(BaseModel):
    """Only the fields sent change; `deadline: null` clears it."""

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"status": "completed"}]},
    )

    title: str | None = Field(default=None, min_length=1, max_length=500)
    status: MilestoneStatus | None = None
    order: int | None = Field(default=None, ge=0, le=1_000_000)
    deadline: datetime | None = None


class EntityRecord(BaseModel):
    id: str
    namespace: str
    name: str
    type: EntityType
    aliases: list[str]
    tags: list[str]
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime


class EntityCreate(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={
            "examples": [{"name": "PostgreSQL", "type": "technology", "aliases": ["Postgres"]}]
        },
    )

    name: str = Field(min_length=1, max_length=200)
    type: EntityType = "concept"
    aliases: list[str] = Field(default_factory=list, max_length=50)
    tags: list[str] = Field(default_factory=list, max_length=50)
    metadata: dict[str, Any] = Field(default_factory=dict)
    namespace: str = Namespace


class EntityPatch(BaseModel):
    """Only the fields sent change; `aliases`, `tags` and `metadata` are replaced."""

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"type": "project", "tags": ["work"]}]},
    )

    name: str | None = Field(default=None, min_length=1, max_length=200)
    type: EntityType | None = None
    aliases: list[str] | None = Field(default=None, max_length=50)
    tags: list[str] | None = Field(default=None, max_length=50)
    metadata: dict[str, Any] | None = None


class ChatTurn(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=20_000)


class ChatRequest(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"message": "What did we decide about the event bus?"}]},
    )

    message: str = Field(min_length=1, max_length=8_000)
    history: list[ChatTurn] = Field(default_factory=list, max_length=50)
    conversation_id: str | None = Field(default=None, max_length=200)
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$",
        description="Retrieve from this namespace only; omitted: every namespace (as search).",
    )
    limit: int = Field(default=5, ge=1, le=20, description="How many memories to retrieve.")


class ChatSource(BaseModel):
    id: str
    preview: str
    score: float
    tags: list[str]
    created_at: datetime | None = None


class ChatResponse(BaseModel):
    response: str
    sources: list[ChatSource]
    conversation_id: str
    provider: str
    model: str


class Backup(BaseModel):
    """The export document. Sections hold every column of their table (never embeddings);
    secret settings are masked."""

    model_config = ConfigDict(allow_inf_nan=False, extra="allow")

    version: int
    exported_at: datetime
    namespace: str | None
    memories: list[dict[str, Any]]
    memory_links: list[dict[str, Any]]
    entities: list[dict[str, Any]]
    memory_entities: list[dict[str, Any]]
    entity_relationships: list[dict[str, Any]]
    goals: list[dict[str, Any]]
    goal_milestones: list[dict[str, Any]]
    goal_links: list[dict[str, Any]]
    contradictions: list[dict[str, Any]]
    consolidations: list[dict[str, Any]]
    settings: dict[str, str]
