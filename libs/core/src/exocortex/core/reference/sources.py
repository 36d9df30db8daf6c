"""Reading the reference product's three formats into one shape: its rows, table by table.

* The SQLite database (``~/.exocortex/exocortex.db`` or a ``VACUUM INTO`` backup): opened
  read-only through the standard library (``mode=ro``, ``query_only``), so the file is never
  modified. Older databases lack columns that later migrations added; a missing column or table
  reads as absent.
* The version 1 JSON export (``BackupData``): the same rows, tags inline, no embeddings.
* The encrypted export: ``salt(32) | iv(12) | tag(16) | ciphertext`` of the JSON, AES-256-GCM
  under a PBKDF2-SHA256 key (100,000 iterations, 32 bytes).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

Kind = Literal["sqlite", "json", "encrypted"]
SQLITE_MAGIC = b"SQLite format 3\x00"
SALT_BYTES = 32
IV_BYTES = 12
TAG_BYTES = 16
PBKDF2_ITERATIONS = 100_000
KEY_BYTES = 32
# The tables a reference database holds that carry the user's memory (the rest, such as its
# search logs and regression runs, are reported as not carried).
TABLES = (
    "memories",
    "memory_tags",
    "entities",
    "entity_tags",
    "memory_entities",
    "entity_relationships",
    "memory_links",
    "goals",
    "contradictions",
    "consolidations",
    "settings",
)
# Its logs and measurements, which start afresh here. Any other table it holds (later versions
# add some: predictions, facts, query outcomes) is reported as well, with its row count.
LOGS = (
    "access_log",
    "co_retrievals",
    "search_misses",
    "observability_counters",
    "retrieval_regression_baselines",
    "retrieval_regression_runs",
    "query_outcomes",
)
# Sections of a version 1 export document.
V1_SECTIONS = (
    "memories",
    "entities",
    "memory_entities",
    "goals",
    "memory_links",
    "entity_relationships",
    "contradictions",
)


class ReferenceError(ValueError):
    """A file that is not a readable reference database or export; the message says why."""


class WrongPassphrase(ReferenceError):
    """The passphrase does not open the encrypted export (or the file was altered)."""


@dataclass
class ReferenceData:
    """The reference's rows by table, as plain values (JSON columns may still be text)."""

    kind: Kind
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    # Rows present in the source that have no place here, by table.
    not_carried: dict[str, int] = field(default_factory=dict)

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables.get(table, [])


def kind_of(path: Path) -> Kind | None:
    """Which reference format a file is, by its content (an ``.enc`` file by its name)."""
    if path.suffix.lower() == ".enc":
        return "encrypted"
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError:
        return None
    if head == SQLITE_MAGIC:
        return "sqlite"
    return None


def read_sqlite(path: Path) -> ReferenceData:
    """The database at ``path``, read-only. A database in WAL mode whose log cannot be read
    in place (a folder this user may not write, where SQLite keeps its shared-memory file) is
    read from a copy of the file and its log, so the original is never touched."""
    if not path.is_file():
        raise ReferenceError(f"{path}: no such file")
    try:
        return _read_sqlite(path)
    except sqlite3.OperationalError as exc:
        if "unable to open" not in str(exc) and "readonly" not in str(exc):
            raise ReferenceError(f"{path}: not a readable SQLite database ({exc})") from None
    with tempfile.TemporaryDirectory(prefix="exo-reference-") as tmp:
        copy = Path(tmp) / path.name
        for suffix in ("", "-wal"):
            source = Path(f"{path}{suffix}")
            if source.is_file():
                shutil.copyfile(source, Path(f"{copy}{suffix}"))
        try:
            return _read_sqlite(copy)
        except sqlite3.Error as exc:
            raise ReferenceError(f"{path}: not a readable SQLite database ({exc})") from None


def _read_sqlite(path: Path) -> ReferenceData:
    uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.execute("PRAGMA query_only = ON")
        present = {
            r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "memories" not in present:
            raise ReferenceError(f"{path}: not a reference database (it has no memories table)")
        data = ReferenceData(kind="sqlite")
        for table in TABLES:
            if table not in present:
                continue
            # The embedding blobs are not read: every memory is embedded again here.
            cursor = conn.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            data.tables[table] = [
                {k: v for k, v in zip(names, row, strict=True) if k != "embedding"}
                for row in cursor
            ]
        data.settings = {str(r["key"]): str(r["value"]) for r in data.tables.pop("settings", [])}
        # Every other table but SQLite's own and the keyword index's (memories_fts*).
        for table in sorted(present - set(TABLES)):
            if table.startswith(("sqlite_", "memories_fts")):
                continue
            quoted = table.replace('"', '""')
            count = conn.execute(f'SELECT count(*) FROM "{quoted}"').fetchone()[0]
            if count:
                data.not_carried[table] = int(count)
        return data
    except sqlite3.OperationalError:
        raise
    except sqlite3.DatabaseError as exc:
        raise ReferenceError(f"{path}: not a readable SQLite database ({exc})") from None
    finally:
        conn.close()


def is_backup_v1(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and document.get("version") == 1
        and isinstance(document.get("memories"), list)
    )


def read_backup_v1(document: Any) -> ReferenceData:
    """A parsed version 1 export. Tags come inline (memories and entities)."""
    if not is_backup_v1(document):
        raise ReferenceError("not a version 1 export (it needs version 1 and a memories list)")
    data = ReferenceData(kind="json")
    for section in V1_SECTIONS:
        rows = document.get(section) or []
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ReferenceError(f"{section} must be a list of objects")
        data.tables[section] = rows
    settings = document.get("settings") or {}
    if not isinstance(settings, dict):
        raise ReferenceError("settings must be an object of keys and values")
    data.settings = {
        str(k): v if isinstance(v, str) else json.dumps(v) for k, v in settings.items()
    }
    return data


def decrypt(blob: bytes, passphrase: str) -> bytes:
    """The plaintext of an encrypted export; ``WrongPassphrase`` when it does not open."""
    header = SALT_BYTES + IV_BYTES + TAG_BYTES
    if len(blob) <= header:
        raise ReferenceError("too short to be an encrypted export")
    salt = blob[:SALT_BYTES]
    iv = blob[SALT_BYTES : SALT_BYTES + IV_BYTES]
    tag = blob[SALT_BYTES + IV_BYTES : header]
    kdf = PBKDF2HMAC(
        algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, iterations=PBKDF2_ITERATIONS
    )
    key = kdf.derive(passphrase.encode("utf-8"))
    try:
        return AESGCM(key).decrypt(iv, blob[header:] + tag, None)
    except InvalidTag:
        raise WrongPassphrase(
            "the passphrase does not open this export (or the file was altered)"
        ) from None


def encrypt(plaintext: bytes, passphrase: str, *, salt: bytes, iv: bytes) -> bytes:
    """The reference's encrypted layout (used to write test fixtures and by round trips)."""
    kdf = PBKDF2HMAC(
        algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, iterations=PBKDF2_ITERATIONS
    )
    sealed = AESGCM(kdf.derive(passphrase.encode("utf-8"))).encrypt(iv, plaintext, None)
    return salt + iv + sealed[-TAG_BYTES:] + sealed[:-TAG_BYTES]


def parse_json(text: bytes | str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReferenceError(f"not JSON ({exc})") from None


def read_path(path: Path, passphrase: str | None = None) -> ReferenceData:
    """Any of the three formats from a file (a passphrase is needed for an encrypted one)."""
    kind = kind_of(path)
    if kind == "sqlite":
        return read_sqlite(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ReferenceError(f"{path}: {exc.strerror}") from None
    if kind == "encrypted":
        if passphrase is None:
            raise ReferenceError(f"{path}: an encrypted export needs its passphrase")
        raw = decrypt(raw, passphrase)
    return read_backup_v1(parse_json(raw))
