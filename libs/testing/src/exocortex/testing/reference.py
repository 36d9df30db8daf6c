"""A memory as the reference product keeps it, built for import tests and benchmarks: its SQLite
database (the schema of its version 5, written with the standard library), its version 1 JSON
export (``BackupData``) and its encrypted export (AES-256-GCM, PBKDF2-SHA256).

Every kind of object is there, in the order the reference writes them (oldest first), which is
the hard order for an import: a superseded chain listed oldest first, consolidated sources
before their summary, the chunks of a long memory before it, an archived memory, a goal with
milestones and a progress note, entities with aliases, tags and a relationship, memory links, a
contradiction, a consolidation, settings (changed, default, unknown, secret) and usage logs.
Each memory holds a word of its own (``Reference.tokens``) to find it by.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ulid import ULID

from exocortex.core.reference.sources import IV_BYTES, SALT_BYTES, encrypt

SCHEMA = """
CREATE TABLE memories (
  id TEXT PRIMARY KEY, content TEXT NOT NULL,
  content_type TEXT NOT NULL DEFAULT 'text'
    CHECK (content_type IN ('text','conversation','note','summary')),
  source TEXT NOT NULL DEFAULT 'manual'
    CHECK (source IN ('manual','cli','api','mcp','browser','import','consolidation')),
  source_uri TEXT, provider TEXT, model_id TEXT, model_name TEXT, agent TEXT, session_id TEXT,
  conversation_id TEXT, embedding BLOB, content_hash TEXT, is_indexed INTEGER NOT NULL DEFAULT 1,
  is_metadata INTEGER NOT NULL DEFAULT 0,
  importance REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0 AND importance <= 1),
  access_count INTEGER NOT NULL DEFAULT 0, last_accessed_at TEXT,
  parent_id TEXT REFERENCES memories(id) ON DELETE CASCADE, is_active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL DEFAULT (datetime('now')),
  updated_at TEXT NOT NULL DEFAULT (datetime('now')),
  superseded_by TEXT, chunk_index INTEGER, metadata TEXT, useful_count INTEGER DEFAULT 0,
  valence REAL DEFAULT 0, expires_at TEXT, namespace TEXT, embedding_model TEXT, keywords TEXT
);
CREATE TABLE memory_tags (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE, tag TEXT NOT NULL,
  PRIMARY KEY (memory_id, tag)
);
CREATE TABLE entities (
  id TEXT PRIMARY KEY, name TEXT NOT NULL,
  type TEXT NOT NULL DEFAULT 'concept'
    CHECK (type IN ('person','project','technology','organization','concept')),
  aliases TEXT DEFAULT '[]', metadata TEXT DEFAULT '{}',
  created_at TEXT NOT NULL DEFAULT (datetime('now')),
  updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE entity_tags (
  entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE, tag TEXT NOT NULL,
  PRIMARY KEY (entity_id, tag)
);
CREATE TABLE memory_entities (
  memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  entity_id TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
  relevance REAL DEFAULT 1.0, PRIMARY KEY (memory_id, entity_id)
);
CREATE TABLE entity_relationships (
  id TEXT PRIMARY KEY, source_entity_id TEXT NOT NULL, target_entity_id TEXT NOT NULL,
  relationship TEXT NOT NULL, confidence REAL DEFAULT 0.7,
  memory_id TEXT REFERENCES memories(id) ON DELETE SET NULL, context TEXT,
  created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE memory_links (
  source_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  target_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  link_type TEXT NOT NULL DEFAULT 'related', strength REAL DEFAULT 0.5,
  created_at TEXT NOT NULL DEFAULT (datetime('now')), PRIMARY KEY (source_id, target_id)
);
CREATE TABLE access_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_id TEXT, query TEXT,
  accessed_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE consolidations (
  id TEXT PRIMARY KEY, summary_id TEXT, source_ids TEXT NOT NULL,
  strategy TEXT NOT NULL DEFAULT 'similarity', memories_merged INTEGER NOT NULL,
  created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE contradictions (
  id TEXT PRIMARY KEY, memory_a_id TEXT NOT NULL, memory_b_id TEXT NOT NULL, description TEXT,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','resolved','dismissed')),
  resolution TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now')),
  updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE goals (
  id TEXT PRIMARY KEY, title TEXT NOT NULL, description TEXT,
  status TEXT NOT NULL DEFAULT 'active'
    CHECK (status IN ('active','completed','stalled','abandoned')),
  priority TEXT NOT NULL DEFAULT 'medium'
    CHECK (priority IN ('low','medium','high','critical')),
  deadline TEXT, metadata TEXT DEFAULT '{}', completed_at TEXT, embedding BLOB,
  created_at TEXT NOT NULL DEFAULT (datetime('now')),
  updated_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE co_retrievals (
  id INTEGER PRIMARY KEY AUTOINCREMENT, query_hash TEXT, memory_ids TEXT, result_count INTEGER,
  created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE search_misses (
  id INTEGER PRIMARY KEY AUTOINCREMENT, query TEXT, result_count INTEGER, max_score REAL,
  filters TEXT, created_at TEXT NOT NULL DEFAULT (datetime('now'))
);
CREATE TABLE observability_counters (key TEXT PRIMARY KEY, value INTEGER, updated_at TEXT);
CREATE TABLE retrieval_regression_baselines (query TEXT PRIMARY KEY, top_ids TEXT);
CREATE TABLE retrieval_regression_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, run_group_id TEXT, query TEXT, baseline_ids TEXT,
  current_ids TEXT, overlap_at_10 REAL, avg_rank_shift REAL, exact_order INTEGER,
  alert INTEGER, created_at TEXT
);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE predictions (id TEXT PRIMARY KEY, claim TEXT NOT NULL, confidence REAL NOT NULL);
"""
FTS = """
CREATE VIRTUAL TABLE memories_fts USING fts5(
  content, keywords, content='memories', content_rowid='rowid'
);
"""
# Columns of a memory in the version 1 export (the rest are not exported by the reference).
V1_MEMORY_COLUMNS = (
    "id", "content", "content_type", "source", "source_uri", "provider", "model_id",
    "model_name", "agent", "session_id", "conversation_id", "content_hash", "is_indexed",
    "is_metadata", "importance", "access_count", "parent_id", "is_active", "metadata",
    "created_at", "updated_at",
)  # fmt: skip
API_KEY = "sk-reference-secret-0000"


@dataclass
class Reference:
    """What was written, to check an import against."""

    path: Path
    # memory id → the word only that memory holds
    tokens: dict[str, str] = field(default_factory=dict)
    created_at: dict[str, str] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    chunks: set[str] = field(default_factory=set)
    superseded: dict[str, str] = field(default_factory=dict)  # id → id of its newer version
    consolidated: dict[str, str] = field(default_factory=dict)  # source id → summary id
    counts: dict[str, int] = field(default_factory=dict)  # per section of a v2 export
    goal_id: str = ""
    archived_id: str = ""
    # A setting the user changed there (one that changes nothing else a test looks at).
    changed_setting: tuple[str, str] = ("sentinel.report_ttl_days", "45")

    def export_v1(self) -> dict[str, Any]:
        return export_v1(self.path)


class _Clock:
    """Timestamps as the reference writes them (UTC, a space, milliseconds), one second apart
    so oldest-first is a real order."""

    def __init__(self) -> None:
        self.at = datetime(2025, 3, 1, 9, 0, 0, 123000, tzinfo=UTC)

    def tick(self) -> str:
        self.at += timedelta(seconds=1)
        return self.at.strftime("%Y-%m-%d %H:%M:%S.") + f"{self.at.microsecond // 1000:03d}"


def _token() -> str:
    return "ref" + uuid.uuid4().hex[:12]


def build(path: Path, *, extra_memories: int = 0) -> Reference:
    """Writes a reference database at ``path`` with every kind of object, plus
    ``extra_memories`` plain memories (for a benchmark)."""
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    # A Python built without FTS5 goes without the table (it only mirrors content).
    with contextlib.suppress(sqlite3.OperationalError):
        conn.executescript(FTS)
    ref = Reference(path=path)
    clock = _Clock()
    memories: list[dict[str, Any]] = []

    def memory(text: str, **extra: Any) -> dict[str, Any]:
        token = _token()
        row: dict[str, Any] = {
            "id": str(ULID()),
            "content": f"{text} ({token})",
            "created_at": clock.tick(),
            **extra,
        }
        row.setdefault("updated_at", row["created_at"])
        ref.tokens[row["id"]] = token
        ref.created_at[row["id"]] = row["created_at"]
        memories.append(row)
        return row

    # A decision revised twice: the reference lists the oldest first, each pointing forward.
    v1 = memory("Deploys go out on Fridays after the review", is_active=0)
    v2 = memory("Deploys go out on Thursdays after the review", is_active=0)
    v3 = memory("Deploys go out on Tuesdays, never on Fridays")
    v1["superseded_by"], v2["superseded_by"] = v2["id"], v3["id"]
    ref.superseded = {v1["id"]: v2["id"], v2["id"]: v3["id"]}
    # Two sources consolidated into a summary written after them.
    s1 = memory("The cache layer uses Redis with a five minute expiry", is_active=0)
    s2 = memory("Redis keys for sessions expire after five minutes", is_active=0)
    summary = memory(
        "Summary: Redis caches sessions with a five minute expiry",
        content_type="summary",
        source="consolidation",
    )
    for source in (s1, s2):
        source["parent_id"] = summary["id"]
        ref.consolidated[source["id"]] = summary["id"]
    # A long memory stored in chunks; the chunk rows are written before their memory here.
    chunk_rows = [
        memory(f"Runbook part {i}: restart the worker, then check the queue depth", chunk_index=i)
        for i in range(3)
    ]
    parent = memory(
        "Runbook for the ingest worker.\n\n" + "\n\n".join(c["content"] for c in chunk_rows),
        content_type="note",
        tags=["runbook"],
    )
    for c in chunk_rows:
        c["parent_id"] = parent["id"]
        ref.chunks.add(c["id"])
    archived = memory("Old laptop serial number for the insurance claim", is_active=0)
    ref.archived_id = archived["id"]
    rich = memory(
        "Ana prefers code reviews in the morning",
        content_type="note",
        source="mcp",
        source_uri="file:///notes/team.md",
        provider="anthropic",
        model_id="claude-sonnet-4",
        model_name="Claude Sonnet 4",
        agent="claude-code",
        session_id="sess-1",
        conversation_id="conv-1",
        importance=0.9,
        access_count=7,
        last_accessed_at=clock.tick(),
        useful_count=3,
        valence=0.4,
        expires_at="2030-01-01 00:00:00",
        metadata=json.dumps({"mood": "calm"}),
        keywords="ana reviews morning",
        namespace="team",
        tags=["people", "preference"],
    )
    other = memory("Ana dislikes code reviews before noon", tags=["people"])
    goal_id = str(ULID())
    ref.goal_id = goal_id
    memory(
        "Progress: the migration script handles the chunked memories",
        content_type="note",
        tags=["goal-progress"],
        metadata=json.dumps({"goal_id": goal_id}),
    )
    for i in range(extra_memories):
        memory(
            f"Note {i}: an observation about the build, the tests and the deploys",
            tags=["bulk"],
        )
    # Written in the order they were made: the chunks before their memory, the sources before
    # their summary, each old version before the one that replaced it.
    conn.execute("PRAGMA foreign_keys = OFF")
    for row in memories:
        tags = row.pop("tags", [])
        columns = ", ".join(row)
        conn.execute(
            f"INSERT INTO memories ({columns}) VALUES ({', '.join('?' * len(row))})",
            list(row.values()),
        )
        conn.executemany(
            "INSERT INTO memory_tags (memory_id, tag) VALUES (?, ?)",
            [(row["id"], t) for t in tags],
        )
        # The reference's vectors: 384 float32 values (read by nothing here).
        conn.execute(
            "UPDATE memories SET embedding = ?, content_hash = ? WHERE id = ?",
            (os.urandom(1536), uuid.uuid4().hex, row["id"]),
        )
    ref.active = {m["id"] for m in memories if m.get("is_active", 1)}
    e1, e2 = str(ULID()), str(ULID())
    conn.executemany(
        "INSERT INTO entities (id, name, type, aliases, metadata, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (e1, "Ana", "person", '["Ana M."]', "{}", clock.tick(), clock.tick()),
            (e2, "Redis", "technology", "[]", '{"site": "redis.io"}', clock.tick(), clock.tick()),
        ],
    )
    conn.execute("INSERT INTO entity_tags VALUES (?, ?)", (e1, "team"))
    conn.executemany(
        "INSERT INTO memory_entities VALUES (?, ?, ?)",
        [(rich["id"], e1, 0.9), (other["id"], e1, 0.8), (summary["id"], e2, 0.95)],
    )
    conn.execute(
        "INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, relationship,"
        " confidence, memory_id, context, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (str(ULID()), e1, e2, "uses", 0.8, summary["id"], "Ana uses Redis", clock.tick()),
    )
    conn.executemany(
        "INSERT INTO memory_links VALUES (?, ?, ?, ?, ?)",
        [
            (rich["id"], other["id"], "contradicts", 0.7, clock.tick()),
            (v3["id"], summary["id"], "related", 0.5, clock.tick()),
        ],
    )
    conn.execute(
        "INSERT INTO contradictions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            str(ULID()),
            rich["id"],
            other["id"],
            "morning or afternoon reviews",
            "resolved",
            "Ana reviews at 11",
            clock.tick(),
            clock.tick(),
        ),
    )
    conn.execute(
        "INSERT INTO consolidations VALUES (?, ?, ?, ?, ?, ?)",
        (
            str(ULID()),
            summary["id"],
            json.dumps([s1["id"], s2["id"]]),
            "similarity",
            2,
            clock.tick(),
        ),
    )
    milestones = [
        {"id": str(ULID()), "title": "Read the database", "status": "completed", "order": 0,
         "deadline": None, "completed_at": clock.tick()},
        {"id": str(ULID()), "title": "Import the chunks", "status": "in_progress", "order": 1,
         "deadline": "2026-06-01", "completed_at": None},
    ]  # fmt: skip
    conn.execute(
        "INSERT INTO goals (id, title, description, status, priority, deadline, metadata,"
        " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            goal_id,
            "Move the memory over",
            "Bring every memory across",
            "active",
            "high",
            "2026-07-01",
            json.dumps({"milestones": milestones, "mode": "manual"}),
            clock.tick(),
            clock.tick(),
        ),
    )
    conn.executemany(
        "INSERT INTO access_log (memory_id, query, accessed_at) VALUES (?, ?, ?)",
        [(rich["id"], "reviews", clock.tick()) for _ in range(3)],
    )
    settings = {
        ref.changed_setting[0]: ref.changed_setting[1],
        "scoring.fts_weight": "0.25",
        "embedding.model": "Xenova/all-MiniLM-L6-v2",
        "server.port": "3210",
        "reference.only_setting": "1",
        "ai.api_key": API_KEY,
        "schema_version": "6",
    }
    conn.executemany("INSERT INTO settings VALUES (?, ?)", list(settings.items()))
    conn.execute("INSERT INTO predictions VALUES (?, ?, ?)", (str(ULID()), "It ships in May", 0.6))
    conn.commit()
    conn.close()
    ref.counts = {
        "memories": len(memories),
        "entities": 2,
        "memory_entities": 3,
        "entity_relationships": 1,
        "memory_links": 2,
        "contradictions": 1,
        "consolidations": 1,
        "goals": 1,
        "goal_milestones": 2,
        "goal_links": 1,
    }
    return ref


def export_v1(path: Path) -> dict[str, Any]:
    """The version 1 export the reference writes of the database at ``path`` (its
    ``exportData``: memories oldest first with their tags and parsed metadata, no embeddings,
    superseded_by or chunk_index; entities by name with their tags, aliases and metadata
    parsed; settings as an object)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        tags: dict[str, list[str]] = {}
        for r in conn.execute("SELECT memory_id, tag FROM memory_tags"):
            tags.setdefault(r["memory_id"], []).append(r["tag"])
        entity_tags: dict[str, list[str]] = {}
        for r in conn.execute("SELECT entity_id, tag FROM entity_tags"):
            entity_tags.setdefault(r["entity_id"], []).append(r["tag"])
        columns = ", ".join(V1_MEMORY_COLUMNS)
        memories = []
        for r in conn.execute(f"SELECT {columns} FROM memories ORDER BY created_at"):
            # As the reference writes it: metadata parsed (left out when there is none).
            row = {k: r[k] for k in r.keys() if k != "metadata"}  # noqa: SIM118 (a Row)
            if r["metadata"]:
                row["metadata"] = json.loads(r["metadata"])
            memories.append({**row, "tags": tags.get(r["id"], [])})
        entities = [
            {
                **dict(r),
                "aliases": json.loads(r["aliases"]),
                "metadata": json.loads(r["metadata"]),
                "tags": entity_tags.get(r["id"], []),
            }
            for r in conn.execute("SELECT * FROM entities ORDER BY name")
        ]

        def table(name: str, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
            rows = conn.execute(f"SELECT * FROM {name}")
            return [{k: v for k, v in dict(r).items() if k not in drop} for r in rows]

        return {
            "version": 1,
            "exported_at": datetime.now(UTC).isoformat(),
            "memories": memories,
            "entities": entities,
            "memory_entities": table("memory_entities"),
            "goals": [
                {**g, "metadata": json.loads(g["metadata"] or "{}")}
                for g in table("goals", drop=("embedding",))
            ],
            "memory_links": table("memory_links"),
            "entity_relationships": table("entity_relationships"),
            "contradictions": table("contradictions"),
            "settings": dict(conn.execute("SELECT key, value FROM settings").fetchall()),
        }
    finally:
        conn.close()


def encrypted(document: dict[str, Any], passphrase: str) -> bytes:
    """The reference's ``.enc`` file of an export."""
    plaintext = json.dumps(document).encode()
    return encrypt(plaintext, passphrase, salt=os.urandom(SALT_BYTES), iv=os.urandom(IV_BYTES))
