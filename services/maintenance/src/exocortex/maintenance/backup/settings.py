"""Backup settings, read once at start (EXO_BACKUP_*)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class BackupSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EXO_BACKUP_", env_file=".env", extra="ignore")

    # The passphrase scheduled backups are encrypted with, and the default for requests that
    # name none. Without it, scheduled backups are off (a backup is never written in clear).
    passphrase: SecretStr | None = None
    # Cron expression (UTC) of the scheduled backup; "" turns the schedule off.
    schedule: str = "30 1 * * *"
    # Scheduled backups also carry each memory's embedding (about 2 KB a memory more), so a
    # restore on the same model embeds nothing.
    include_embeddings: bool = False
    # Where the Obsidian vault is written (default: <data_dir>/obsidian).
    obsidian_vault: Path | None = None
    # The longest memory content a restore takes: ingest's limit for a live write (the same
    # variable, read by both services).
    max_content_chars: int = Field(
        default=200_000, ge=1, validation_alias=AliasChoices("EXO_MAX_CONTENT_CHARS")
    )

    @field_validator("passphrase", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # Compose passes an unset variable as "": no passphrase, scheduled backups off.
        return None if value == "" else value

    @field_validator("passphrase")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 8:
            raise ValueError("EXO_BACKUP_PASSPHRASE must have at least 8 characters")
        return value
