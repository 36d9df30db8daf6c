"""The encrypted backup format on its own (no stack): it round-trips, and every kind of damage,
truncation, reordering or a wrong passphrase is refused with a message saying which."""

from __future__ import annotations

import io
import json
import struct

import pytest

from exocortex.core.backup_format import crypto, document

PASS = "correct horse battery"


def _sealed(plain: bytes, chunk: int = 64) -> bytes:
    out = io.BytesIO()
    writer = crypto.EncryptingWriter(out, PASS, chunk_bytes=chunk)
    writer.write(plain)
    writer.close()
    return out.getvalue()


def _open(raw: bytes, passphrase: str = PASS) -> bytes:
    return b"".join(crypto.decrypt_chunks(io.BytesIO(raw), passphrase))


def _chunks(raw: bytes) -> tuple[bytes, list[bytes]]:
    pos = crypto.header_size()
    head, chunks = raw[:pos], []
    while pos < len(raw):
        (length,) = struct.unpack(">I", raw[pos : pos + 4])
        chunks.append(raw[pos : pos + 4 + length])
        pos += 4 + length
    return head, chunks


def test_plaintext_round_trips_in_chunks() -> None:
    plain = bytes(range(256)) * 5
    raw = _sealed(plain)
    assert raw.startswith(b"EXOBAK\x01")
    assert plain not in raw
    assert _open(raw) == plain
    assert len(_chunks(raw)[1]) == len(plain) // 64  # the last full chunk is the final one
    assert _open(_sealed(b"")) == b""


def test_wrong_passphrase_is_refused() -> None:
    with pytest.raises(crypto.BackupFormatError, match="wrong passphrase"):
        _open(_sealed(b"secret data"), "another passphrase")


def test_a_flipped_bit_is_found() -> None:
    raw = bytearray(_sealed(b"x" * 300))
    raw[-5] ^= 1
    with pytest.raises(crypto.BackupFormatError, match="damaged"):
        _open(bytes(raw))


def test_a_missing_final_chunk_is_truncation() -> None:
    head, chunks = _chunks(_sealed(b"y" * 300))
    with pytest.raises(crypto.BackupFormatError, match="truncated"):
        _open(head + b"".join(chunks[:-1]))


def test_reordered_chunks_and_trailing_bytes_are_refused() -> None:
    head, chunks = _chunks(_sealed(b"z" * 300))
    swapped = [chunks[1], chunks[0], *chunks[2:]]
    with pytest.raises(crypto.BackupFormatError):
        _open(head + b"".join(swapped))
    with pytest.raises(crypto.BackupFormatError, match="after the final chunk"):
        _open(head + b"".join(chunks) + b"extra")


def test_a_changed_header_breaks_every_chunk() -> None:
    raw = bytearray(_sealed(b"w" * 100))
    raw[crypto.header_size() - 2] ^= 1  # in the chunk size field: authenticated as well
    with pytest.raises(crypto.BackupFormatError):
        _open(bytes(raw))


def test_not_a_backup_and_short_passphrases_are_refused() -> None:
    with pytest.raises(crypto.BackupFormatError, match="not an Exocortex backup"):
        _open(b"PK\x03\x04 a zip file")
    with pytest.raises(ValueError, match="at least 8"):
        crypto.EncryptingWriter(io.BytesIO(), "short")


def _document(items: dict[str, list[str]]) -> bytes:
    parts: list[bytes] = []
    writer = document.DocumentWriter(parts.append, {"exported_at": "2026-12-01T00:00:00+00:00"})
    for section, values in items.items():
        writer.batch(section, values)
    writer.finish()
    return b"".join(parts)


def test_the_manifest_catches_a_changed_or_missing_item() -> None:
    raw = _document({"memories": ['{"id":"a"}', '{"id":"b"}'], "goals": []})
    good = document.verify([raw[:10], raw[10:]])  # a line split across chunks
    assert good.ok, good.problems
    assert good.counts == {"memories": 2, "goals": 0}
    assert good.version == document.DOCUMENT_VERSION

    changed = document.verify([raw.replace(b'"id":"b"', b'"id":"c"')])
    assert changed.problems == ["memories: checksum differs from the manifest"]

    lines = raw.split(b"\n")
    dropped = document.verify([b"\n".join([lines[0], lines[2], *lines[3:]])])
    assert "memories: 1 items, the manifest says 2" in dropped.problems

    cut = document.verify([b"\n".join(lines[:-2])])
    assert cut.problems == ["no manifest: the backup is incomplete"]
    assert json.loads(lines[-2])["manifest"]["counts"]["memories"] == 2
