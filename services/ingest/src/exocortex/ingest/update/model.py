"""What an update takes: the changes to one memory, in domain terms (no protobuf)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from exocortex.core.records import Attribution


@dataclass(frozen=True)
class MemoryChanges:
    """A PATCH of one memory: None leaves a field as it is; ``clear_fields`` nulls fields."""

    id: str
    content: str | None = None
    content_type: str | None = None
    tags: tuple[str, ...] | None = None
    importance: float | None = None
    valence: float | None = None
    expires_at: datetime | None = None
    source_uri: str | None = None
    namespace: str | None = None
    # Fields left None are unchanged (``clear_fields`` nulls one).
    attribution: Attribution = field(default_factory=Attribution)
    # The metadata keys to set as a JSON object (a null value deletes the key); empty: none.
    metadata_patch_json: str = ""
    is_active: bool | None = None
    is_metadata: bool | None = None
    clear_fields: tuple[str, ...] = ()
