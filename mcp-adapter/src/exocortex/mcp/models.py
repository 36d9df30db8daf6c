"""Structured results of the tools (each tool's ``outputSchema``).

Field names follow the REST API. Models ignore fields they do not name, so a newer gateway that
adds fields does not break an older adapter.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Memory(Out):
    id: str
    content: str
    content_type: str = "text"
    namespace: str = "default"
    tags: list[str] = Field(default_factory=list)
    importance: float = 0.5
    valence: float = 0.0
    source: str | None = None
    source_uri: str | None = None
    is_active: bool = True
    # Who put it in the trash: "person" or "automation"; None while active.
    archived_by: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    provider: str | None = None
    model_id: str | None = None
    model_name: str | None = None
    agent: str | None = None
    session_id: str | None = None
    conversation_id: str | None = None
    useful_count: int = 0
    access_count: int = 0
    superseded_by: str | None = None
    parent_id: str | None = None
    expires_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class Hit(Out):
    """One search or listing result: the full text, or a preview in compact mode."""

    id: str
    text: str
    score: float | None = None
    tags: list[str] = Field(default_factory=list)
    content_type: str | None = None
    importance: float | None = None
    created_at: str | None = None


class Linked(Out):
    id: str
    text: str
    linked_from: str
    link_type: str
    strength: float


class StoreResult(Out):
    id: str
    namespace: str
    dedup_action: str
    indexed: bool
    tags: list[str]
    superseded_id: str | None = None
    dedup_similarity: float | None = None


class SearchOutput(Out):
    query: str
    count: int
    results: list[Hit]
    linked: list[Linked] = Field(default_factory=list)
    mode: str | None = None
    degraded: list[str] = Field(default_factory=list)


class ListOutput(Out):
    count: int
    results: list[Hit]


class GetOutput(Out):
    memories: list[Memory]
    missing: list[str]


class MemoryOutput(Out):
    memory: Memory


class ForgetOutput(Out):
    id: str
    deleted: bool


class FeedbackOutput(Out):
    recorded: list[str]
    missing: list[str]


class LinkOutput(Out):
    source_id: str
    target_id: str
    link_type: str
    strength: float | None = None
    removed: bool


class IngestedFile(Out):
    name: str
    sections: int = 0
    stored: int = 0
    unchanged: int = 0
    replaced: int = 0
    memory_ids: list[str] = Field(default_factory=list)


class IngestOutput(Out):
    files: list[IngestedFile]
    stored: int
    replaced: int
    indexed: bool = False


class DigestOutput(Out):
    id: str | None
    project: str | None = None
    actions: int = 0
    files_changed: int = 0
    commands: int = 0
    dedup_action: str | None = None


class DiffOutput(Out):
    since: str
    created: list[Hit]
    updated: list[Hit]
    archived: list[Hit]


class Relationship(Out):
    target: str
    relationship: str
    direction: str | None = None
    context: str | None = None


class Entity(Out):
    id: str
    name: str
    type: str | None = None
    aliases: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    memory_count: int | None = None
    relationships: list[Relationship] = Field(default_factory=list)


class EntitiesOutput(Out):
    count: int
    entities: list[Entity]


class TimelineOutput(Out):
    mode: Literal["decisions", "lineage", "evolution", "hierarchy"]
    count: int
    memories: list[Hit] = Field(default_factory=list)
    hierarchy: dict[str, Any] | None = None


class Milestone(Out):
    id: str
    title: str
    status: str = "pending"
    order: int | None = None
    deadline: str | None = None
    completed_at: str | None = None


class Goal(Out):
    id: str
    namespace: str = "default"
    title: str
    description: str | None = None
    status: str = "active"
    priority: str = "medium"
    deadline: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    milestones: list[Milestone] = Field(default_factory=list)
    progress: list[Hit] = Field(default_factory=list)
    progress_count: int = 0
    completed_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None


class GoalOutput(Out):
    goal: Goal


class GoalListOutput(Out):
    count: int
    goals: list[Goal]


class GoalLogOutput(Out):
    goal_id: str
    memory_id: str


class SnapshotOutput(Out):
    project: str
    since: str
    recent: list[Hit]
    decisions: list[Hit]
    open_threads: list[Hit]
    techniques: list[Hit]
    goals: list[Goal]


class HealthCheck(Out):
    name: str
    status: str
    detail: str
    suggestion: str


class PingOutput(Out):
    status: str
    gateway_url: str
    dependencies: dict[str, str] = Field(default_factory=dict)
    # The memory health checks (GET /api/maintenance/health), as the original's ping had them.
    health: str | None = None
    checks: list[HealthCheck] = Field(default_factory=list)
    active: int | None = None
    total: int | None = None
    chunks: int | None = None
    entities: int | None = None
    tags: int | None = None
    oldest: str | None = None
    newest: str | None = None
    uptime: float | None = None
