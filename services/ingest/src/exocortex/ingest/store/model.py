"""What the store path takes and gives: a memory to store, in domain terms (no protobuf), and
what became of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exocortex.core.records import Attribution, MemoryRecord

# A row read as a dict: goals, entities, links and memories inside a transaction (a memory
# leaves a service as a MemoryRecord).
Row = dict[str, Any]


@dataclass(frozen=True)
class MemoryInput:
    """One memory to store, as the caller gave it (unvalidated). None means not given: the
    store's default applies."""

    content: str
    namespace: str = ""
    content_type: str | None = None
    source: str | None = None
    source_uri: str | None = None
    tags: tuple[str, ...] = ()
    importance: float | None = None
    valence: float | None = None
    # The metadata object as JSON text (empty: none), checked where it is parsed.
    metadata_json: str = ""
    # Who wrote it; a field left None falls back to metadata, then to the deployment default.
    attribution: Attribution = field(default_factory=Attribution)
    is_metadata: bool | None = None
    expires_at: datetime | None = None
    benchmark: bool = False
    # An existing memory this one is stored as a child of (see ``store.children``).
    parent_id: str | None = None


@dataclass
class StoreResult:
    memory: MemoryRecord
    dedup_action: str
    matched_id: str | None = None
    similarity: float | None = None
