"""What the document paths take and give, in domain terms (no protobuf)."""

from __future__ import annotations

from dataclasses import dataclass, field

from exocortex.core.records import Attribution
from exocortex.ingest.store.model import StoreResult


@dataclass(frozen=True)
class MarkdownFile:
    """A document: its text, or (empty ``content``) a path or glob in the import folder."""

    source_uri: str
    content: str = ""


@dataclass(frozen=True)
class MarkdownImport:
    namespace: str
    files: tuple[MarkdownFile, ...]
    tags: tuple[str, ...] = ()
    # Defaults: note, and the store's own importance.
    content_type: str | None = None
    importance: float | None = None


@dataclass(frozen=True)
class SessionTranscript:
    """A coding session to digest: its text, or a path in the import folder."""

    namespace: str
    transcript: str = ""
    transcript_path: str = ""
    project: str | None = None
    tags: tuple[str, ...] = ()
    attribution: Attribution = field(default_factory=Attribution)


@dataclass
class FileOutcome:
    source_uri: str
    sections: int = 0
    stored: int = 0
    unchanged: int = 0
    replaced: int = 0
    memory_ids: list[str] = field(default_factory=list)


@dataclass
class DigestOutcome:
    stored: StoreResult
    project: str
    actions: int
    files_changed: int
    commands: int
