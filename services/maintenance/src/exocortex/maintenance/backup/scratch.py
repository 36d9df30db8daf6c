"""Deep verification: a backup restored into a scratch database of the same Postgres, its rows
counted and their keys hashed per section and compared with the backup, the scratch database
dropped whatever happens. A file can verify (every chunk decrypts, the manifest matches) and
still not restore; this proves that it restores, with every item it holds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.db.pool import open_pool
from exocortex.maintenance.backup.restore import Restorer, RestoreReport, item_key
from exocortex.maintenance.backup.scratch_repository import (
    KEY_SQL,
    ScratchUnavailable,
    restored_keys,
    scratch_database,
)

__all__ = ["ScratchUnavailable", "keys_checksum", "restore_and_compare"]


def keys_checksum(keys: Iterable[str]) -> str:
    """SHA-256 of the sorted keys, one per line: equal when the same items are present."""
    digest = hashlib.sha256()
    for key in sorted(keys):
        digest.update(key.encode() + b"\n")
    return digest.hexdigest()


def _report_problems(report: RestoreReport) -> list[str]:
    problems = []
    for section, result in sorted(report.sections.items()):
        if section != "settings" and (result.skipped or result.conflict):
            problems.append(
                f"{section}: {result.skipped + result.conflict} items did not restore "
                "into an empty database"
            )
    problems.extend(
        f"{i.section} {i.key}: {i.reason}"
        for i in report.items[:10]
        if i.section != "settings" and i.outcome in ("skipped", "conflict")
    )
    return problems


async def restore_and_compare(
    dsn: str,
    embedding: EmbeddingClient,
    items: Iterator[tuple[str, dict[str, Any]]],
    manifest_counts: dict[str, int],
) -> tuple[dict[str, int], list[str]]:
    """Restores ``items`` into a scratch database and compares each section's rows with the
    backup: the count with the manifest's, the checksum of the restored keys with that of the
    backup's keys. Returns the restored counts and the problems (empty when it all matches)."""
    expected: dict[str, list[str]] = {}

    def noted(pairs: Iterator[tuple[str, dict[str, Any]]]) -> Iterator[tuple[str, dict[str, Any]]]:
        for section, item in pairs:
            if section in KEY_SQL:
                expected.setdefault(section, []).append(item_key(section, item))
            yield section, item

    async with scratch_database(dsn) as url:
        pool = await open_pool(url, min_size=1, max_size=2, name="backup-verify")
        try:
            report = await Restorer(pool, embedding, embed=False).restore(
                noted(items), dry_run=False
            )
        finally:
            await pool.close()
        sections = sorted((set(manifest_counts) | set(expected)) & set(KEY_SQL))
        restored = await restored_keys(url, sections)
    problems = _report_problems(report)
    counts = {section: len(keys) for section, keys in restored.items()}
    for section in sections:
        found, wanted = counts[section], manifest_counts.get(section, 0)
        if found != wanted:
            problems.append(
                f"{section}: {found} rows restored into the scratch database, "
                f"the manifest says {wanted}"
            )
        if keys_checksum(restored[section]) != keys_checksum(expected.get(section, [])):
            problems.append(f"{section}: the restored rows' checksum differs from the backup's")
    return counts, problems
