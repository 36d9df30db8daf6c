"""The export document (a backup of one namespace or of everything), the encrypted backups
in the data folder, their verification and restore, and the Obsidian vault export."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.limits import PASSPHRASE_MAX, PASSPHRASE_MIN


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


class Passphrase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    passphrase: str | None = Field(
        default=None,
        min_length=PASSPHRASE_MIN,
        max_length=PASSPHRASE_MAX,
        description="Encrypts (or opens) the backup; default: EXO_BACKUP_PASSPHRASE on the "
        "maintenance service.",
    )


class CreateBackup(Passphrase):
    include_embeddings: bool = Field(
        default=False,
        description="Also keep each memory's embedding (about 2 KB a memory), so a restore on "
        "the same model embeds nothing.",
    )


class BackupFile(BaseModel):
    name: str
    size_bytes: int
    created_at: datetime
    scheduled: bool
    counts: dict[str, int] = Field(description="Items per section (on creation only).")


class BackupList(BaseModel):
    backups: list[BackupFile]


class VerifyRequest(Passphrase):
    deep: bool = Field(
        default=False,
        description="Also restore the backup into a scratch database (created in the same "
        "Postgres, always dropped; the role needs CREATEDB) and compare each section's rows, "
        "count and checksum of their keys, with the backup.",
    )


class VerifyReport(BaseModel):
    name: str
    ok: bool
    format_version: int
    exported_at: datetime | None
    counts: dict[str, int]
    problems: list[str]
    deep: bool = Field(default=False, description="Whether the backup was restored to verify it.")
    restored_counts: dict[str, int] | None = Field(
        default=None, description="Deep verify: rows per section in the scratch database."
    )


class RestoreRequest(Passphrase):
    dry_run: bool = Field(
        default=False, description="Report what would be created, skipped or in conflict."
    )


class SectionOutcome(BaseModel):
    created: int = 0
    skipped: int = 0
    conflict: int = 0
    updated: int = 0


class ItemOutcome(BaseModel):
    section: str
    key: str
    outcome: str
    reason: str


class RestoreReport(BaseModel):
    dry_run: bool
    sections: dict[str, SectionOutcome]
    items: list[ItemOutcome] = Field(description="Items not created (at most 100).")


class ExportDocument(BaseModel):
    """An export as GET /api/export writes it, accepted by POST /api/memories/import: every
    row with its id, version and timestamps (the sections are read as the export wrote them)."""

    model_config = ConfigDict(extra="allow")
    version: Literal[2]
    memories: list[dict[str, Any]]


class ReferenceExport(BaseModel):
    """The reference product's version 1 JSON export (``BackupData``), accepted by POST
    /api/memories/import: converted to an export document and restored exactly (see
    docs/migrating.md for what maps to what)."""

    model_config = ConfigDict(extra="allow")
    version: Literal[1]
    memories: list[dict[str, Any]]


class LeftOutItems(BaseModel):
    kind: str
    count: int
    reason: str


class ReferenceRestoreReport(RestoreReport):
    left_out: list[LeftOutItems] = Field(
        description="What of the reference's document does not come across, and why."
    )


class ObsidianRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    full: bool = Field(
        default=False, description="Rewrite every note, not only what changed since last time."
    )


class ObsidianReport(BaseModel):
    vault: str
    memories_written: int
    entities_written: int
    goals_written: int
    contradictions_written: int
    incremental: bool
