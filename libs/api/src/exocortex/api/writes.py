"""Request and response bodies of the memory write routes (seed names kept, fields added)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from exocortex.api.base import Ok, Strict
from exocortex.api.limits import (
    ATTRIBUTION_MAX,
    BULK_IDS_MAX,
    ID_MAX,
    IMPORT_MAX,
    INGEST_FILES_MAX,
    NAMESPACE_MAX,
    PATH_MAX,
    SOURCE_URI_MAX,
    TAGS_MAX,
)
from exocortex.api.memories import Memory, MemoryCreate, StoredMemory
from exocortex.api.vocabulary import ContentType, LinkType, Source

Id = Field(min_length=1, max_length=ID_MAX)


class MemoryUpdate(Strict):
    """Only the fields given change. ``null`` clears a nullable field; in ``metadata`` a
    ``null`` value deletes that key and other keys are merged."""

    content: str | None = Field(default=None, min_length=1)
    content_type: ContentType | None = None
    tags: list[str] | None = Field(default=None, max_length=TAGS_MAX)
    importance: float | None = Field(default=None, ge=0, le=1)
    valence: float | None = Field(default=None, ge=-1, le=1)
    metadata: dict[str, Any] | None = None
    is_active: bool | None = None
    is_metadata: bool | None = None
    expires_at: datetime | None = None
    namespace: str | None = Field(default=None, min_length=1, max_length=NAMESPACE_MAX)
    source_uri: str | None = Field(default=None, max_length=SOURCE_URI_MAX)
    provider: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    model_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    model_name: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    agent: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    session_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    conversation_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)

    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"tags": ["architecture"], "metadata": {"old": None}}]},
    )


class UpdatedMemory(Memory):
    ok: bool = True
    indexed: bool = Field(description="True when the new version was searchable before the reply.")


class Deleted(Ok):
    id: str
    chunks_deleted: int


class ImportItem(MemoryCreate):
    """One memory of an import; the same fields as a single store. ``source`` defaults to
    ``import``."""

    # Checked per item by ingest, so one empty item fails alone instead of the whole import.
    content: str = Field(description="The memory text; an empty one is reported in `errors`.")
    source: Source = "import"
    # An import stores memories of their own; a child is stored with POST /api/memories.
    parent_id: None = Field(default=None, description="Not taken by an import.")


class ImportRequest(Strict):
    memories: list[ImportItem] = Field(min_length=1, max_length=IMPORT_MAX)


class ImportItemResult(BaseModel):
    index: int
    id: str | None
    dedup_action: Literal["created", "skipped", "superseded", "merged", "failed"]
    error: str | None = None
    field: str | None = None


class ImportResponse(BaseModel):
    indexed: bool = Field(
        description="Every new memory was searchable before the reply (false: committed, "
        "searchable shortly)."
    )
    imported: int
    failed: int
    errors: list[str] = Field(description="The first ten error messages (seed field).")
    results: list[ImportItemResult]


class LinkCreate(Strict):
    target_id: str = Id
    link_type: LinkType = "related"
    strength: float = Field(default=0.5, ge=0, le=1)


class LinkOut(BaseModel):
    source_id: str
    target_id: str
    link_type: str
    strength: float
    created_at: datetime


class LinkDeleted(Ok):
    deleted: bool


class BulkTag(Strict):
    ids: list[str] = Field(min_length=1, max_length=BULK_IDS_MAX)
    add_tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    remove_tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)


class BulkUpdate(Strict):
    ids: list[str] = Field(min_length=1, max_length=BULK_IDS_MAX)
    importance: float | None = Field(default=None, ge=0, le=1)
    valence: float | None = Field(default=None, ge=-1, le=1)
    is_active: bool | None = None


class BulkResult(Ok):
    affected: int
    missing_ids: list[str]


class MarkdownFile(Strict):
    """One document: its text (``name`` + ``content``), or, only when the operator set
    ``EXO_IMPORT_ROOT``, a ``path`` inside that folder for the server to read."""

    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=PATH_MAX,
        description="Names the document (its `source_uri`); re-ingesting a name replaces its "
        "memories. Required with `content`.",
    )
    content: str | None = Field(default=None, min_length=1, description="The markdown text.")
    path: str | None = Field(
        default=None,
        min_length=1,
        max_length=PATH_MAX,
        description="A file in the server's import folder (`EXO_IMPORT_ROOT`), relative to it; "
        "`*` and `?` in the file name part match several files. Refused (400) when the "
        "server has no import folder: send `content` instead.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> MarkdownFile:
        if self.content is not None and self.path is not None:
            raise ValueError(
                "give `name` with `content`, or `path` alone (a file in the import folder)"
            )
        if self.content is not None and self.name is None:
            raise ValueError("`name` names the document; it is required with `content`")
        if self.content is None and self.path is None:
            raise ValueError("give the document's `content` (with a `name`)")
        return self


class IngestRequest(Strict):
    files: list[MarkdownFile] = Field(min_length=1, max_length=INGEST_FILES_MAX)
    namespace: str = Field(default="default", min_length=1, max_length=NAMESPACE_MAX)
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    importance: float | None = Field(default=None, ge=0, le=1)
    content_type: ContentType = "note"


class IngestedFile(BaseModel):
    name: str = Field(
        description="The document's name: the given `name`, or the file's path on the server."
    )
    sections: int
    stored: int
    unchanged: int
    replaced: int
    memory_ids: list[str]


class IngestResponse(BaseModel):
    files: list[IngestedFile]
    stored: int
    replaced: int
    indexed: bool = Field(
        description="Every section is searchable (false: committed, searchable shortly)."
    )


class DigestRequest(Strict):
    transcript: str | None = Field(default=None, min_length=1, description="JSONL text.")
    transcript_path: str | None = Field(
        default=None,
        min_length=1,
        max_length=PATH_MAX,
        description="A transcript in the server's import folder (`EXO_IMPORT_ROOT`), relative to "
        "it. Refused (400) when the server has no import folder: send `transcript` instead.",
    )
    namespace: str = Field(default="default", min_length=1, max_length=NAMESPACE_MAX)
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    project: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    agent: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    session_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    model_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    provider: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)


class DigestResponse(BaseModel):
    memory: StoredMemory
    project: str | None
    actions: int
    files_changed: int
    commands: int
