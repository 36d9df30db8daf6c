"""Verifying a backup file on this machine, without a server: an encrypted backup (`.exobak`,
copied from the server's data folder) is decrypted chunk by chunk and every section's count and
checksum compared with its manifest; an export document (`exo export -o`) is parsed and its
sections counted. The embedding check looks at a sample of the memories."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from exocortex.core.backup_format import crypto, document

SAMPLE_SEED = 0  # the same file samples the same memories each time


@dataclass
class LocalReport:
    name: str
    kind: str  # encrypted backup | export document
    ok: bool = True
    format_version: int = 0
    exported_at: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    embeddings: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "ok": self.ok and not self.problems,
            "format_version": self.format_version,
            "exported_at": self.exported_at,
            "counts": self.counts,
            "problems": self.problems,
            "embeddings": self.embeddings,
        }


def is_encrypted(path: Path) -> bool:
    with path.open("rb") as source:
        return source.read(len(crypto.MAGIC)) == crypto.MAGIC


def verify(
    path: Path, passphrase: str | None, *, check_embeddings: bool, sample_size: int
) -> LocalReport:
    if is_encrypted(path):
        report = _verify_encrypted(path, passphrase, check_embeddings, sample_size)
    else:
        report = _verify_export(path, check_embeddings, sample_size)
    checked = report.embeddings
    if checked is not None and not checked["ok"]:
        report.problems.append(
            f"embeddings: of {checked['sampled']} sampled memories {checked['with_content']} "
            f"have text, and the vectors {'agree' if checked['consistent'] else 'differ'} in size"
        )
    return report


def _verify_encrypted(
    path: Path, passphrase: str | None, check_embeddings: bool, sample_size: int
) -> LocalReport:
    report = LocalReport(path.name, "encrypted backup")
    if not passphrase:
        report.problems.append("an encrypted backup: give --passphrase (or EXO_BACKUP_PASSPHRASE)")
        return report
    try:
        with path.open("rb") as source:
            result = document.verify(crypto.decrypt_chunks(source, passphrase))
        if check_embeddings:
            with path.open("rb") as source:
                report.embeddings = embedding_check(
                    _backup_memories(document.lines(crypto.decrypt_chunks(source, passphrase))),
                    sample_size,
                )
    except crypto.BackupFormatError as err:
        report.problems.append(str(err))
        return report
    report.format_version = result.version
    report.exported_at = result.exported_at
    report.counts = result.counts
    report.problems += result.problems
    return report


def _backup_memories(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    for raw in lines:
        try:
            value = json.loads(raw)
        except ValueError:
            continue  # reported by the verification itself
        if isinstance(value, dict) and value.get("section") == "memories":
            item = value.get("item")
            if isinstance(item, dict):
                yield item


def _verify_export(path: Path, check_embeddings: bool, sample_size: int) -> LocalReport:
    report = LocalReport(path.name, "export document")
    try:
        doc = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError) as err:
        report.problems.append(f"not an encrypted backup nor a JSON export document: {err}")
        return report
    if not isinstance(doc, dict) or not isinstance(doc.get("memories"), list):
        report.problems.append("not an export document: no memories list")
        return report
    report.format_version = int(doc.get("version") or 0)
    report.exported_at = doc.get("exported_at")
    report.counts = {k: len(v) for k, v in doc.items() if isinstance(v, list)}
    memories = [m for m in doc["memories"] if isinstance(m, dict)]
    ids = [m.get("id") for m in memories]
    if len(memories) != len(doc["memories"]):
        report.problems.append("memories: an item is not an object")
    if any(not isinstance(i, str) or not i for i in ids):
        report.problems.append("memories: an item has no id")
    if len(set(ids)) != len(ids):
        report.problems.append("memories: the same id twice")
    if check_embeddings:
        report.embeddings = embedding_check(iter(memories), sample_size)
    return report


def embedding_check(memories: Iterator[dict[str, Any]], sample_size: int) -> dict[str, Any]:
    """A sample (reservoir, seeded) of the memories: how many have text to embed, and how many
    carry an embedding of the same length (a backup made with embeddings). A backup without
    embeddings is fine: a restore embeds the text again."""
    rng = random.Random(SAMPLE_SEED)
    sample: list[dict[str, Any]] = []
    seen = 0
    for memory in memories:
        seen += 1
        if len(sample) < sample_size:
            sample.append(memory)
        else:
            slot = rng.randrange(seen)
            if slot < sample_size:
                sample[slot] = memory
    with_text = sum(1 for m in sample if str(m.get("content") or "").strip())
    vectors = [m.get("embedding") for m in sample if m.get("embedding")]
    lengths = {len(v) for v in vectors if isinstance(v, list | str)}
    return {
        "memories": seen,
        "sampled": len(sample),
        "with_content": with_text,
        "with_embedding": len(vectors),
        "consistent": len(lengths) <= 1,
        "ok": with_text == len(sample) and len(lengths) <= 1,
    }
