"""What an encrypted backup holds once decrypted: the export as JSON Lines.

    {"format": "exocortex-backup", "version": 2, "exported_at": ..., "namespace": null}
    {"section": "memories", "item": {...}}        one line per exported item, in export order
    ...
    {"manifest": {"counts": {section: n}, "sha256": {section: hex}}}

Each section's checksum is the SHA-256 of its items' JSON, each followed by a newline, in file
order. Verification recounts and rehashes every line and compares with the manifest.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

FORMAT = "exocortex-backup"
DOCUMENT_VERSION = 2


class _Sections:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._hashes: dict[str, Any] = {}

    def add(self, section: str, item_json: bytes) -> None:
        self.counts[section] = self.counts.get(section, 0) + 1
        digest = self._hashes.get(section)
        if digest is None:
            digest = self._hashes[section] = hashlib.sha256()
        digest.update(item_json + b"\n")

    def touch(self, section: str) -> None:
        """A section with no items still appears (count 0)."""
        self.counts.setdefault(section, 0)
        self._hashes.setdefault(section, hashlib.sha256())

    def checksums(self) -> dict[str, str]:
        return {name: digest.hexdigest() for name, digest in self._hashes.items()}


class DocumentWriter:
    """Turns export batches into the JSON Lines document, handing bytes to ``sink``."""

    def __init__(self, sink: Callable[[bytes], None], head: dict[str, Any]) -> None:
        self._sink = sink
        self._sections = _Sections()
        self._sink(_line({"format": FORMAT, "version": DOCUMENT_VERSION, **head}))

    def batch(self, section: str, items_json: Iterable[str]) -> None:
        self._sections.touch(section)
        parts = []
        prefix = _item_prefix(section)
        for item in items_json:
            raw = item.encode()
            self._sections.add(section, raw)
            parts.append(prefix + raw + b"}\n")
        if parts:
            self._sink(b"".join(parts))

    def finish(self) -> dict[str, int]:
        manifest = {"counts": self._sections.counts, "sha256": self._sections.checksums()}
        self._sink(_line({"manifest": manifest}))
        return dict(self._sections.counts)


def _item_prefix(section: str) -> bytes:
    return f'{{"section":{json.dumps(section)},"item":'.encode()


def _line(value: dict[str, Any]) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass
class Verification:
    version: int = 0
    exported_at: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    # The counts the manifest claims (a deep verify compares the restored rows with them).
    manifest_counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Whole lines across chunk boundaries."""
    rest = b""
    for chunk in chunks:
        rest += chunk
        *complete, rest = rest.split(b"\n")
        yield from complete
    if rest:
        yield rest


def verify(chunks: Iterable[bytes]) -> Verification:
    """Reads the whole document: every line must parse, the items' counts and checksums must
    equal the manifest's, and nothing may follow the manifest."""
    result = Verification()
    sections = _Sections()
    manifest: dict[str, Any] | None = None
    for number, raw in enumerate(lines(chunks), 1):
        if manifest is not None:
            result.problems.append(f"line {number}: data after the manifest")
            break
        try:
            value = json.loads(raw)
        except ValueError:
            result.problems.append(f"line {number}: not JSON")
            continue
        if number == 1:
            if value.get("format") != FORMAT:
                result.problems.append("line 1: not an Exocortex backup document")
            result.version = int(value.get("version") or 0)
            result.exported_at = value.get("exported_at")
        elif "manifest" in value:
            manifest = value["manifest"]
        elif isinstance(value.get("section"), str) and "item" in value:
            # The item's bytes exactly as written (the line parsed, so they are valid JSON).
            prefix = _item_prefix(value["section"])
            if raw.startswith(prefix) and raw.endswith(b"}"):
                item = raw[len(prefix) : -1]
            else:
                item = json.dumps(value["item"], ensure_ascii=False, separators=(",", ":")).encode()
            sections.add(value["section"], item)
        else:
            result.problems.append(f"line {number}: neither an item nor the manifest")
    result.counts = dict(sections.counts)
    if manifest is None:
        result.problems.append("no manifest: the backup is incomplete")
        return result
    expected_counts = manifest.get("counts", {})
    result.manifest_counts = {str(k): int(v) for k, v in expected_counts.items()}
    expected_sums = manifest.get("sha256", {})
    for name in sorted(set(expected_counts) | set(sections.counts)):
        found, expected = sections.counts.get(name, 0), expected_counts.get(name, 0)
        if found != expected:
            result.problems.append(f"{name}: {found} items, the manifest says {expected}")
    found_sums = sections.checksums()
    for name, expected_sum in expected_sums.items():
        if expected_counts.get(name, 0) and found_sums.get(name) != expected_sum:
            result.problems.append(f"{name}: checksum differs from the manifest")
        result.counts.setdefault(name, 0)
    return result
