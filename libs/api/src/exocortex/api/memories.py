"""The memory itself: the body that stores one, the memory as every route returns it, and a
search's compact result."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.base import Strict
from exocortex.api.limits import (
    ATTRIBUTION_MAX,
    ID_MAX,
    NAMESPACE_MAX,
    SOURCE_URI_MAX,
    TAGS_MAX,
)
from exocortex.api.vocabulary import ContentType, DedupAction, Source


class MemoryCreate(Strict):
    content: str = Field(
        min_length=1, description="The memory text. `<private>` blocks are removed."
    )
    namespace: str = Field(default="default", min_length=1, max_length=NAMESPACE_MAX)
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    content_type: ContentType = "text"
    source: Source = "api"
    source_uri: str | None = Field(default=None, max_length=SOURCE_URI_MAX)
    importance: float | None = Field(default=None, ge=0, le=1)
    valence: float | None = Field(default=None, ge=-1, le=1)
    metadata: dict[str, Any] | None = None
    is_metadata: bool | None = None
    benchmark: bool = False
    expires_at: datetime | None = None
    provider: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    model_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    model_name: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    agent: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    session_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    conversation_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    parent_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX,
        description="An active memory of the same namespace this one is part of (as a chunk): "
        "stored as its child, found through it, not listed on its own. 404 when no such "
        "memory is in the namespace.",
    )

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
    archived_by: Literal["person", "automation"] | None = Field(
        default=None,
        description="Who put an archived memory in the trash. Only what a person trashed is "
        "deleted after trash.auto_purge_days; what automation archived waits until the trash "
        "is emptied. Null while active.",
    )


class StoredMemory(Memory):
    dedup_action: DedupAction
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
