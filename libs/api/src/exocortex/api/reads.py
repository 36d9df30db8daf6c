"""Reads: listings, the namespace list, what changed since a time, a memory's links, and the
project snapshot."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from exocortex.api.goals import Goal
from exocortex.api.memories import CompactResult, Memory


class MemoryList(BaseModel):
    results: list[Memory]
    count: int
    total: int


class Namespaces(BaseModel):
    namespaces: list[str]


class DiffCounts(BaseModel):
    created: int
    updated: int
    archived: int


class Diff(BaseModel):
    created: list[Memory]
    updated: list[Memory]
    archived: list[Memory]
    counts: DiffCounts


class LinkPreview(BaseModel):
    id: str
    content: str
    content_type: str
    importance: float
    created_at: Any


class MemoryLink(BaseModel):
    memory_id: str
    link_type: str
    strength: float
    direction: str
    created_at: Any
    preview: LinkPreview


class Links(BaseModel):
    links: list[MemoryLink]
    count: int


class Snapshot(BaseModel):
    project: str
    namespace: str
    days: int
    since: datetime = Field(description="Start of the recent-activity window.")
    recent: list[CompactResult] = Field(description="Memories about the project since `since`.")
    decisions: list[CompactResult] = Field(description="Tagged `decision`.")
    open_threads: list[CompactResult] = Field(
        description="Tagged `plan`, `todo`, `next-steps` or `in-progress`."
    )
    techniques: list[CompactResult] = Field(description="Tagged `technique`.")
    goals: list[Goal] = Field(description="Active goals of the namespace, by priority then newest.")
    degraded: list[str] = Field(description="Indexes that could not answer a search section.")
