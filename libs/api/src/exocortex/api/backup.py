"""The export document (a backup of one namespace or of everything)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict


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
