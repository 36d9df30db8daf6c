"""Entities found in memories (people, projects, technologies…) and the edits people make."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.base import Namespace
from exocortex.api.limits import ALIASES_MAX, ENTITY_NAME_MAX, TAGS_MAX
from exocortex.api.vocabulary import EntityType


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

    name: str = Field(min_length=1, max_length=ENTITY_NAME_MAX)
    type: EntityType = "concept"
    aliases: list[str] = Field(default_factory=list, max_length=ALIASES_MAX)
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    metadata: dict[str, Any] = Field(default_factory=dict)
    namespace: str = Namespace


class EntityPatch(BaseModel):
    """Only the fields sent change; `aliases`, `tags` and `metadata` are replaced."""

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"type": "project", "tags": ["work"]}]},
    )

    name: str | None = Field(default=None, min_length=1, max_length=ENTITY_NAME_MAX)
    type: EntityType | None = None
    aliases: list[str] | None = Field(default=None, max_length=ALIASES_MAX)
    tags: list[str] | None = Field(default=None, max_length=TAGS_MAX)
    metadata: dict[str, Any] | None = None
