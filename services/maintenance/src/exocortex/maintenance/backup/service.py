"""Backups on typed values: write one (encrypted, atomically), list them, verify one, apply the
retention of scheduled ones, and export the Obsidian vault."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from exocortex.core import scope
from exocortex.core.backup_format import crypto, document
from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.domain.safe_paths import safe_child
from exocortex.core.errors import Conflict, InvalidArgument, PermissionDenied, Unavailable
from exocortex.core.logging import get_logger
from exocortex.maintenance.backup import files
from exocortex.maintenance.backup.files import BackupEntry
from exocortex.maintenance.backup.obsidian import ObsidianExporter, ObsidianReport
from exocortex.maintenance.backup.repository import MAX_COUNT_DEFAULT
from exocortex.maintenance.backup.restore import Restorer, RestoreReport, items_of
from exocortex.maintenance.backup.scratch import ScratchUnavailable, restore_and_compare
from exocortex.maintenance.backup.settings import BackupSettings
from exocortex.maintenance.backup.validation import CONTENT_MAX_DEFAULT, check_items
from exocortex.maintenance.clients import ExportSource

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class VerifyReport:
    name: str
    ok: bool
    counts: dict[str, int]
    problems: list[str]
    format_version: int
    exported_at: datetime | None
    manifest_counts: dict[str, int] = field(default_factory=dict)
    # Set by a deep verify: the rows per section restored into the scratch database.
    restored_counts: dict[str, int] | None = None

    @property
    def deep(self) -> bool:
        return self.restored_counts is not None


def require_every_namespace() -> None:
    """Backups hold every namespace and live on the server: only a key that may see every
    namespace may make, list or verify them."""
    if scope.current_scope() is not None:
        raise PermissionDenied("backups need an API key that may use every namespace")


class BackupService:
    def __init__(
        self,
        source: ExportSource,
        data_dir: Path,
        settings: BackupSettings,
        obsidian: ObsidianExporter,
        restorer: Restorer,
        deep_verifier: DeepVerifier | None = None,
        keep: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        self._source = source
        self.folder = data_dir / "backups"
        self._settings = settings
        self._obsidian = obsidian
        self._restorer = restorer
        self._deep_verifier = deep_verifier
        # Scheduled backups kept (the `backup.max_count` setting, read at each backup).
        self._keep = keep

    def _passphrase(self, given: str) -> str:
        if given:
            try:
                return crypto.check_passphrase(given)
            except ValueError as err:
                raise InvalidArgument(str(err), field="passphrase") from err
        if self._settings.passphrase is None:
            raise InvalidArgument(
                "no passphrase: give one, or set EXO_BACKUP_PASSPHRASE on the maintenance service",
                field="passphrase",
            )
        return self._settings.passphrase.get_secret_value()

    async def create(
        self, passphrase: str = "", *, scheduled: bool = False, include_embeddings: bool = False
    ) -> BackupEntry:
        secret = self._passphrase(passphrase)
        now = datetime.now(UTC)
        name = files.new_name(now, scheduled=scheduled)
        self.folder.mkdir(parents=True, exist_ok=True)
        final = safe_child(self.folder, name)
        partial = final.with_name(name + ".partial")
        try:
            with partial.open("wb") as out:
                # scrypt costs a fraction of a second of CPU: off the event loop.
                writer = await asyncio.to_thread(crypto.EncryptingWriter, out, secret)
                doc = document.DocumentWriter(
                    writer.write, {"exported_at": now.isoformat(), "namespace": None}
                )
                async for section, items in self._source.batches(embeddings=include_embeddings):
                    doc.batch(section, items)
                counts = doc.finish()
                writer.close()
                out.flush()
                os.fsync(out.fileno())
            # Only a complete file ever carries the backup's name.
            partial.replace(final)
            files.fsync_dir(self.folder)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
        log.info("backup written", name=name, bytes=final.stat().st_size, counts=counts)
        return BackupEntry(name, final.stat().st_size, now, scheduled, counts)

    def list(self) -> list[BackupEntry]:
        return files.listing(self.folder)

    async def verify(self, name: str, passphrase: str = "", *, deep: bool = False) -> VerifyReport:
        """The fast verify reads the file; ``deep`` also restores it into a scratch database
        and compares each section's rows with the manifest (see scratch.py)."""
        path = files.path_of(self.folder, name)
        secret = self._passphrase(passphrase)
        report = await asyncio.to_thread(verify_file, path, secret)
        if not deep:
            return report
        if self._deep_verifier is None:
            raise Unavailable("deep verify is not available on this maintenance service")
        if report.format_version == 0:
            # Nothing decrypted or parsed: there is nothing to restore.
            return replace(report, restored_counts={})
        try:
            restored, problems = await self._deep_verifier.run(path, secret, report.manifest_counts)
        except ScratchUnavailable as err:
            # The server cannot make the scratch database: the file is not at fault.
            raise Conflict(str(err), field="deep") from err
        return replace(
            report,
            ok=report.ok and not problems,
            problems=report.problems + problems,
            restored_counts=restored,
        )

    async def restore(self, name: str, passphrase: str = "", *, dry_run: bool) -> RestoreReport:
        """Verifies the whole file first: a damaged backup restores nothing."""
        path = files.path_of(self.folder, name)
        secret = self._passphrase(passphrase)
        check = await asyncio.to_thread(verify_file, path, secret)
        if not check.ok:
            raise InvalidArgument(
                "the backup does not verify: " + "; ".join(check.problems), field="name"
            )
        # Every item is checked before the first is written (one more pass over the file).
        with path.open("rb") as source:
            await self._restorer.check(items_of(crypto.decrypt_chunks(source, secret)))
        with path.open("rb") as source:
            chunks = crypto.decrypt_chunks(source, secret)
            # The key derivation runs with the first chunk: off the event loop.
            first = await asyncio.to_thread(next, chunks, b"")
            return await self._restorer.restore(
                items_of(itertools.chain([first], chunks)), dry_run=dry_run
            )

    async def restore_document(self, document_json: str, *, dry_run: bool) -> RestoreReport:
        """An export document (as GET /api/export writes it) restored like a backup, once
        every item of it passed the checks of its live write."""
        items = export_items(document_json)
        await self._restorer.check(items)
        return await self._restorer.restore(items, dry_run=dry_run)

    async def scheduled(self) -> BackupEntry | None:
        """The scheduled backup and the retention after it; off without a passphrase."""
        if self._settings.passphrase is None:
            log.warning("scheduled backup skipped: EXO_BACKUP_PASSPHRASE is not set")
            return None
        entry = await self.create(
            scheduled=True, include_embeddings=self._settings.include_embeddings
        )
        keep = await self._keep() if self._keep is not None else MAX_COUNT_DEFAULT
        for old in files.expired(self.folder, keep):
            # Retention removes only older scheduled copies; never a backup made on request.
            old.unlink(missing_ok=True)
            log.info("old scheduled backup removed", name=old.name, keep=keep)
        return entry

    async def obsidian(self, *, full: bool) -> ObsidianReport:
        return await self._obsidian.export(full=full)


def export_items(document_json: str) -> list[tuple[str, dict[str, Any]]]:
    """(section, item) pairs of an export document, in its own section order."""
    try:
        doc = json.loads(document_json)
    except ValueError as err:
        raise InvalidArgument("the export document is not JSON", field="body") from err
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        raise InvalidArgument("not an export document (no memories list)", field="memories")
    version = doc.get("version")
    if version != document.DOCUMENT_VERSION:
        raise InvalidArgument(
            f"export version {version!r} is not supported (expected {document.DOCUMENT_VERSION})",
            field="version",
        )
    items: list[tuple[str, Any]] = []
    for section, value in doc.items():
        if section in _HEADER:
            continue
        if section == "settings" and isinstance(value, dict):
            items.append((section, value))
        elif isinstance(value, list):
            # Every item, whatever its shape: the checks name the one that is not an object.
            items.extend((section, item) for item in value)
        else:
            kind = "an object" if section == "settings" else "a list"
            raise InvalidArgument(f"{section} must be {kind}", field=section)
    return items


# The fields of an export document that are not sections.
_HEADER = frozenset({"format", "version", "exported_at", "namespace"})


def verify_file(path: Path, passphrase: str) -> VerifyReport:
    """Decrypts every chunk (each one's tag checked), parses every line, and compares each
    section's count and checksum with the manifest written at the end."""
    try:
        with path.open("rb") as source:
            result = document.verify(crypto.decrypt_chunks(source, passphrase))
    except crypto.BackupFormatError as err:
        return VerifyReport(path.name, False, {}, [str(err)], 0, None)
    exported = None
    if result.exported_at:
        with contextlib.suppress(ValueError):
            exported = datetime.fromisoformat(result.exported_at)
    return VerifyReport(
        path.name,
        result.ok,
        result.counts,
        result.problems,
        result.version,
        exported,
        result.manifest_counts,
    )


class DeepVerifier:
    """Restores a backup file into a scratch database of the store's Postgres."""

    def __init__(
        self, dsn: str, embedding: EmbeddingClient, *, max_content_chars: int = CONTENT_MAX_DEFAULT
    ) -> None:
        self._dsn = dsn
        self._embedding = embedding
        self._max_content_chars = max_content_chars

    async def run(
        self, path: Path, passphrase: str, manifest_counts: dict[str, int]
    ) -> tuple[dict[str, int], list[str]]:
        # A backup a restore would refuse does not verify either.
        try:
            with path.open("rb") as source:
                await asyncio.to_thread(
                    check_items,
                    items_of(crypto.decrypt_chunks(source, passphrase)),
                    model=None,
                    max_content_chars=self._max_content_chars,
                )
        except InvalidArgument as err:
            return {}, [f"the backup would not restore: {err.message}"]
        with path.open("rb") as source:
            chunks = crypto.decrypt_chunks(source, passphrase)
            first = await asyncio.to_thread(next, chunks, b"")
            return await restore_and_compare(
                self._dsn,
                self._embedding,
                items_of(itertools.chain([first], chunks)),
                manifest_counts,
            )
