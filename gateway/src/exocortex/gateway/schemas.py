"""Request and response bodies of the REST API (field names follow the seed's API)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ContentType = Literal["text", "note", "decision", "conversation", "summary"]
Source = Literal["manual", "cli", "api", "mcp", "browser", "import", "consolidation", "digest"]


class Strict(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid", str_strip_whitespace=False)


class MemoryCreate(Strict):
    content: str = Field(
        min_length=1, description="The memory text. `<private>` blocks are removed."
    )
    namespace: str = Field(default="default", min_length=1, max_length=128)
    tags: list[str] = Field(default_factory=list, max_length=50)
    content_type: ContentType = "text"
    source: Source = "api"
    source_uri: str | None = Field(default=None, max_length=2048)
    importance: float | None = Field(default=None, ge=0, le=1)
    valence: float | None = Field(default=None, ge=-1, le=1)
    metadata: dict[str, Any] | None = None
    is_metadata: bool | None = None
    benchmark: bool = False
    expires_at: datetime | None = None
    provider: str | None = Field(default=None, max_length=200)
    model_id: str | None = Field(default=None, max_length=200)
    model_name: str | None = Field(default=None, max_length=200)
    agent: str | None = Field(default=None, max_length=200)
    session_id: str | None = Field(default=None, max_length=200)
    conversation_id: str | None = Field(default=None, max_length=200)

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "content": "We chose NATS JetStream for events because it is light.",
                    "tags": ["architecture", "decision"],
                    "content_type": "decision",
                    "importance": 0.8,
                }
            ]
        },
    )


class Memory(BaseModel):
    id: str
    namespace: str
    content: str
    content_type: str
    source: str
    source_uri: str | None = None
    importance: float
    valence: float
    is_active: bool
    is_metadata: bool
    parent_id: str | None = None
    chunk_index: int | None = None
    superseded_by: str | None = None
    tags: list[str]
    keywords: str
    access_count: int
    useful_count: int
    last_accessed_at: datetime | None = None
    expires_at: datetime | None = None
    provider: str | None = None
    model_id: str | None = None
    model_name: str | None = None
    agent: str | None = None
    session_id: str | None = None
    conversation_id: str | None = None
    metadata: dict[str, Any]
    embedding_model: str | None = None
    enrichment_status: str
    version: int
    created_at: datetime
    updated_at: datetime


class StoredMemory(Memory):
    dedup_action: Literal["created", "skipped", "superseded", "merged"]
    superseded_id: str | None = Field(
        default=None, description="The existing memory a duplicate matched (seed name)."
    )
    dedup_similarity: float | None = None
    indexed: bool = Field(description="True when the memory was searchable before the response.")


class CompactResult(BaseModel):
    id: str
    preview: str
    score: float
    tags: list[str]
    created_at: datetime


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
