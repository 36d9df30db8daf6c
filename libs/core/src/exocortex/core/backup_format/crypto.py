"""The encrypted backup file format, version 1 (see docs/backup.md).

    header  = magic "EXOBAK" | version u8 (1) | kdf u8 (1 = scrypt) | log2(N) u8 | r u8 | p u8
              | salt (16 bytes) | nonce prefix (7 bytes) | chunk size u32 (big-endian)
    chunk   = length u32 (big-endian) | AES-256-GCM ciphertext with its 16-byte tag
    file    = header | chunk* ; the last chunk is marked final (possibly empty)

The key is scrypt(passphrase, salt, N, r, p) of 32 bytes. Chunk i is sealed with the nonce
prefix | i (u32, big-endian) | 1 if final else 0, and the whole header as associated data, so a
chunk cannot be reordered, dropped, moved to another file or made final (the STREAM
construction); a file without its final chunk is truncated, and bytes after it are refused.
The plaintext is streamed through in chunks, so an export of any size never sits in memory.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"EXOBAK"
FORMAT_VERSION = 1
KDF_SCRYPT = 1
# scrypt cost: N = 2^17, r = 8, p = 1 (128 MiB, a fraction of a second), as OWASP recommends.
LOG2_N, R, P = 17, 8, 1
SALT_BYTES = 16
NONCE_PREFIX_BYTES = 7
CHUNK_BYTES = 1 << 20
TAG_BYTES = 16
_HEADER = struct.Struct(f">{len(MAGIC)}sBBBBB{SALT_BYTES}s{NONCE_PREFIX_BYTES}sI")
_LENGTH = struct.Struct(">I")
# A chunk larger than this is refused before it is read (a damaged length field).
MAX_CHUNK_BYTES = 64 << 20
MIN_PASSPHRASE = 8


class BackupFormatError(ValueError):
    """The file is not a backup, is damaged or truncated, or the passphrase is wrong."""


@dataclass(frozen=True, slots=True)
class Header:
    version: int
    log2_n: int
    r: int
    p: int
    salt: bytes
    nonce_prefix: bytes
    chunk_bytes: int

    def pack(self) -> bytes:
        return _HEADER.pack(
            MAGIC,
            self.version,
            KDF_SCRYPT,
            self.log2_n,
            self.r,
            self.p,
            self.salt,
            self.nonce_prefix,
            self.chunk_bytes,
        )

    @classmethod
    def unpack(cls, raw: bytes) -> Header:
        if len(raw) < _HEADER.size or not raw.startswith(MAGIC):
            raise BackupFormatError("not an Exocortex backup (no EXOBAK header)")
        _magic, version, kdf, log2_n, r, p, salt, prefix, chunk = _HEADER.unpack(raw)
        if version != FORMAT_VERSION:
            raise BackupFormatError(f"backup format version {version} is not supported")
        if kdf != KDF_SCRYPT or not 10 <= log2_n <= 22 or not 1 <= r <= 32 or not 1 <= p <= 16:
            raise BackupFormatError("unsupported key derivation parameters")
        if not 1 <= chunk <= MAX_CHUNK_BYTES:
            raise BackupFormatError("damaged header (chunk size)")
        return cls(version, log2_n, r, p, salt, prefix, chunk)


def header_size() -> int:
    return _HEADER.size


def derive_key(passphrase: str, header: Header) -> bytes:
    kdf = Scrypt(salt=header.salt, length=32, n=1 << header.log2_n, r=header.r, p=header.p)
    return kdf.derive(passphrase.encode())


def check_passphrase(passphrase: str) -> str:
    if len(passphrase) < MIN_PASSPHRASE:
        raise ValueError(f"the passphrase must have at least {MIN_PASSPHRASE} characters")
    return passphrase


def _nonce(prefix: bytes, index: int, final: bool) -> bytes:
    return prefix + struct.pack(">I", index) + (b"\x01" if final else b"\x00")


class EncryptingWriter:
    """Writes the header, then the plaintext given to :meth:`write` in sealed chunks;
    :meth:`close` seals the final chunk. Does not close ``out``."""

    def __init__(self, out: BinaryIO, passphrase: str, *, chunk_bytes: int = CHUNK_BYTES) -> None:
        self._header = Header(
            FORMAT_VERSION,
            LOG2_N,
            R,
            P,
            os.urandom(SALT_BYTES),
            os.urandom(NONCE_PREFIX_BYTES),
            chunk_bytes,
        )
        self._aad = self._header.pack()
        self._aead = AESGCM(derive_key(check_passphrase(passphrase), self._header))
        self._out = out
        self._buffer = bytearray()
        self._index = 0
        out.write(self._aad)

    def write(self, data: bytes) -> None:
        self._buffer += data
        size = self._header.chunk_bytes
        # Keep at least one byte back: the last chunk must be sealed as final.
        while len(self._buffer) > size:
            self._seal(bytes(self._buffer[:size]), final=False)
            del self._buffer[:size]

    def close(self) -> None:
        self._seal(bytes(self._buffer), final=True)
        self._buffer.clear()

    def _seal(self, plain: bytes, *, final: bool) -> None:
        if self._index >= 0xFFFFFFFF:
            raise BackupFormatError("backup too large for one file")
        sealed = self._aead.encrypt(
            _nonce(self._header.nonce_prefix, self._index, final), plain, self._aad
        )
        self._out.write(_LENGTH.pack(len(sealed)) + sealed)
        self._index += 1


def decrypt_chunks(source: BinaryIO, passphrase: str) -> Iterator[bytes]:
    """The plaintext, chunk by chunk, each checked before it is given out. Raises
    :class:`BackupFormatError` on a wrong passphrase, damage, truncation or trailing bytes."""
    raw = source.read(_HEADER.size)
    header = Header.unpack(raw)
    aead = AESGCM(derive_key(passphrase, header))
    index = 0
    while True:
        length_raw = source.read(_LENGTH.size)
        if len(length_raw) < _LENGTH.size:
            raise BackupFormatError("the backup is truncated (no final chunk)")
        (length,) = _LENGTH.unpack(length_raw)
        if not TAG_BYTES <= length <= header.chunk_bytes + TAG_BYTES:
            raise BackupFormatError(f"damaged chunk {index} (length {length})")
        sealed = source.read(length)
        if len(sealed) < length:
            raise BackupFormatError("the backup is truncated (partial chunk)")
        plain, final = _open(aead, header, raw, index, sealed)
        yield plain
        if final:
            if source.read(1):
                raise BackupFormatError("unexpected bytes after the final chunk")
            return
        index += 1


def _open(
    aead: AESGCM, header: Header, aad: bytes, index: int, sealed: bytes
) -> tuple[bytes, bool]:
    for final in (False, True):
        try:
            return aead.decrypt(_nonce(header.nonce_prefix, index, final), sealed, aad), final
        except InvalidTag:
            continue
    if index == 0:
        raise BackupFormatError("cannot decrypt: wrong passphrase, or the file is damaged")
    raise BackupFormatError(f"chunk {index} is damaged or out of place")
