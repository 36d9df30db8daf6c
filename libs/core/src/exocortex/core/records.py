"""Typed rows read from Postgres, built by psycopg's ``class_row`` so a field name is checked by
mypy instead of discovered at run time.

The attribution field list (who wrote a memory) is declared here once; the columns of
``memories``, the write paths and the REST/MCP shapes all take it from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

# The attribution columns of a memory, in the order of the table (and of the proto message).
AttributionField = Literal[
    "provider", "model_id", "model_name", "agent", "session_id", "conversation_id"
]
ATTRIBUTION_FIELDS: tuple[AttributionField, ...] = get_args(AttributionField)


@dataclass(frozen=True, slots=True)
class Attribution:
    """Who wrote a memory: every field optional, none implied by another."""

    provider: str | None = None
    model_id: str | None = None
    model_name: str | None = None
    agent: str | None = None
    session_id: str | None = None
    conversation_id: str | None = None

    def given(self) -> dict[AttributionField, str]:
        """The fields that are set, by name."""
        return {
            name: value for name in ATTRIBUTION_FIELDS if (value := getattr(self, name)) is not None
        }


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One row of ``memories`` as ``repositories.memories`` selects it: every column but the
    embedding (unless asked for), with its access counts from ``memory_usage`` and its tags."""

    id: str
    namespace: str
    content: str
    content_type: str
    source: str
    source_uri: str | None
    importance: float
    valence: float
    is_active: bool
    is_metadata: bool
    parent_id: str | None
    chunk_index: int | None
    consolidated_into: str | None
    superseded_by: str | None
    content_hash: str | None
    keywords: str
    embedding_model: str | None
    access_count: int
    last_accessed_at: datetime | None
    useful_count: int
    expires_at: datetime | None
    provider: str | None
    model_id: str | None
    model_name: str | None
    agent: str | None
    session_id: str | None
    conversation_id: str | None
    metadata: dict[str, Any]
    enrichment_status: str
    created_at: datetime
    updated_at: datetime
    version: int
    tags: list[str] = field(default_factory=list)
    # "person" or "automation" while archived (kept by a trigger), None while active.
    archived_by: str | None = None
    # Only when read with the embedding (the projector, the reconciler).
    embedding: bytes | None = None

    @property
    def attribution(self) -> Attribution:
        return Attribution(
            provider=self.provider,
            model_id=self.model_id,
            model_name=self.model_name,
            agent=self.agent,
            session_id=self.session_id,
            conversation_id=self.conversation_id,
        )

    def is_live(self, now: datetime) -> bool:
        """Active and not expired: what the indexes hold and searches may answer."""
        return self.is_active and (self.expires_at is None or self.expires_at > now)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> MemoryRecord:
        """A record from a dict row of the same columns (extra keys ignored)."""
        return cls(**{name: row[name] for name in _MEMORY_FIELDS if name in row})


_MEMORY_FIELDS = MemoryRecord.__dataclass_fields__.keys()


@dataclass(frozen=True, slots=True)
class EntityRecord:
    """One row of ``entities`` with its tags and how many memories mention it."""

    id: str
    namespace: str
    name: str
    type: str
    aliases: Any
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    tags: list[str] = field(default_factory=list)
    memory_count: int = 0
