"""Restore documents: what ``POST /api/memories/import`` takes as an export document (version 2)
is held to the checks of the live write of each object. An id that is not a ULID (``../../x``,
an absolute path), a namespace a live write refuses, an embedding of the wrong size, a time
without a zone or a setting outside its schema is a 400 naming ``section.index.field``, and
nothing of the document is written; ``ai.*`` settings are never restored (skipped and
reported), so a document cannot send the stored LLM key to a host of its choosing."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.core.backup_format import crypto, document
from exocortex.core.ids import new_id
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.backup import files

from .conftest import Keyed

Db = psycopg.AsyncConnection[dict[str, Any]]
Doc = dict[str, Any]


async def _document(keyed: Keyed, content: str) -> tuple[Doc, dict[str, Any]]:
    """An export of namespace ``a`` (with embeddings) and its one memory."""
    stored = await keyed.admin.post(
        "/api/memories", json={"content": content, "namespace": keyed.a, "tags": ["restore"]}
    )
    assert stored.status_code == 201, stored.text
    reply = await keyed.admin.get(
        "/api/export", params={"namespace": keyed.a, "include_embeddings": True}
    )
    assert reply.status_code == 200, reply.text
    doc: Doc = reply.json()
    memory = next(m for m in doc["memories"] if m["id"] == stored.json()["id"])
    return doc, memory


def _fresh(memory: dict[str, Any], content: str) -> dict[str, Any]:
    """A copy of ``memory`` the store does not hold: a new id and content."""
    return {**copy.deepcopy(memory), "id": new_id(), "content": content, "content_hash": None}


async def _exists(db: Db, memory_id: str) -> bool:
    cur = await db.execute("SELECT 1 FROM memories WHERE id = %s", (memory_id,))
    return await cur.fetchone() is not None


async def _search_works(api: httpx.AsyncClient, namespace: str) -> None:
    reply = await api.post(
        "/api/memories/search", json={"query": "restore documents", "namespace": namespace}
    )
    assert reply.status_code == 200, reply.text


def _bad_memory(tmp: Path) -> dict[str, tuple[Callable[[dict[str, Any]], None], str]]:
    def set_(name: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda m: m.__setitem__(name, value)

    def short_embedding(m: dict[str, Any]) -> None:
        # Made by the model running now (same fingerprint), but 10 floats instead of its 384.
        m["embedding"] = base64.b64encode(bytes(40)).decode()

    return {
        "relative escape": (set_("id", "../../escaped-note"), "memories.1.id"),
        "absolute path": (set_("id", str(tmp / "absolute-note")), "memories.1.id"),
        "not a ULID": (set_("id", "m-not-an-id"), "memories.1.id"),
        "parent outside": (set_("parent_id", "../parent"), "memories.1.parent_id"),
        "namespace with a slash": (set_("namespace", "a/../b"), "memories.1.namespace"),
        "namespace with a space": (set_("namespace", "two words"), "memories.1.namespace"),
        "empty content": (set_("content", "   "), "memories.1.content"),
        "unknown content type": (set_("content_type", "x" * 40), "memories.1.content_type"),
        "importance out of range": (set_("importance", 7), "memories.1.importance"),
        "too many tags": (set_("tags", [f"t{i}" for i in range(51)]), "memories.1.tags"),
        "a time without zone": (set_("created_at", "2026-01-01T00:00:00"), "memories.1.created_at"),
        "wrong embedding dimension": (short_embedding, "memories.1.embedding"),
        "embedding not base64": (set_("embedding", "%%%"), "memories.1.embedding"),
    }


@pytest.mark.parametrize("name", list(_bad_memory(Path("/unused"))))
async def test_a_memory_a_live_write_would_refuse_refuses_the_whole_document(
    keyed: Keyed, stack_db: Db, tmp_path: Path, name: str
) -> None:
    mutate, field = _bad_memory(tmp_path)[name]
    doc, memory = await _document(keyed, f"Restore documents are checked: {name}")
    good = _fresh(memory, f"A good memory beside a bad one ({name})")
    bad = _fresh(memory, f"The bad memory ({name})")
    mutate(bad)
    doc["memories"] = [good, bad]

    for params in ({"dry_run": True}, {}):
        reply = await keyed.admin.post("/api/memories/import", params=params, json=doc)
        assert reply.status_code == 400, (name, reply.text)
        assert reply.headers["content-type"].startswith("application/problem+json")
        assert reply.json()["field"] == field, reply.json()
    # Nothing of the document was written: not even the good memory before the bad one.
    assert not await _exists(stack_db, good["id"])
    assert not await _exists(stack_db, str(bad.get("id")))
    assert not (tmp_path / "absolute-note").exists()
    await _search_works(keyed.admin, keyed.a)


@pytest.mark.parametrize(
    ("section", "item", "field"),
    [
        ("goals", {"id": "../../goal", "namespace": "default", "title": "g"}, "goals.0.id"),
        ("entities", {"id": new_id(), "namespace": "/abs", "name": "e"}, "entities.0.namespace"),
        (
            "memory_links",
            {"source_id": "/etc/passwd", "target_id": new_id(), "link_type": "related"},
            "memory_links.0.source_id",
        ),
        (
            "goal_milestones",
            {"id": new_id(), "goal_id": "..", "title": "m", "sort_order": 0},
            "goal_milestones.0.goal_id",
        ),
        (
            "entity_relationships",
            {
                "id": new_id(),
                "source_entity_id": "../../entity",
                "target_entity_id": new_id(),
                "relationship": "uses",
            },
            "entity_relationships.0.source_entity_id",
        ),
        (
            "entity_relationships",
            {
                "id": new_id(),
                "source_entity_id": new_id(),
                "target_entity_id": new_id(),
                "relationship": "uses",
                "memory_id": "/etc/passwd",
            },
            "entity_relationships.0.memory_id",
        ),
        (
            "contradictions",
            {"id": "c1", "memory_a_id": new_id(), "memory_b_id": new_id(), "description": "x"},
            "contradictions.0.id",
        ),
        (
            "consolidations",
            {"id": new_id(), "source_ids": ["../x"], "strategy": "s", "memories_merged": 1},
            "consolidations.0.source_ids.0",
        ),
        ("goals", ["not", "an", "object"], "goals.0"),
    ],
)
async def test_every_section_is_checked(
    keyed: Keyed, stack_db: Db, section: str, item: Any, field: str
) -> None:
    doc, memory = await _document(keyed, f"Every section of a restore is checked: {section}")
    good = _fresh(memory, f"A good memory in a document with a bad {section} item")
    doc["memories"] = [good]
    doc[section] = [item]
    reply = await keyed.admin.post("/api/memories/import", json=doc)
    assert reply.status_code == 400, reply.text
    assert reply.json()["field"] == field, reply.json()
    assert not await _exists(stack_db, good["id"])


async def _settings(db: Db) -> dict[str, str]:
    cur = await db.execute("SELECT key, value FROM settings")
    return {r["key"]: r["value"] for r in await cur.fetchall()}


async def test_settings_outside_their_schema_are_refused_and_search_still_works(
    keyed: Keyed, stack_db: Db
) -> None:
    doc, memory = await _document(keyed, "Restore documents carry settings too")
    before = await _settings(stack_db)
    good = _fresh(memory, "A good memory in a document with a broken setting")
    doc["memories"] = [good]
    doc["settings"] = {"scoring.recency_decay": "-1000"}
    reply = await keyed.admin.post("/api/memories/import", json=doc)
    assert reply.status_code == 400, reply.text
    assert reply.json()["field"] == "settings.scoring.recency_decay"
    assert (await _settings(stack_db)).get("scoring.recency_decay") == before.get(
        "scoring.recency_decay"
    )
    assert not await _exists(stack_db, good["id"])
    await _search_works(keyed.admin, keyed.a)


async def test_ai_settings_are_never_restored_and_are_reported(keyed: Keyed, stack_db: Db) -> None:
    doc, memory = await _document(keyed, "Restore documents never move the LLM key")
    before = await _settings(stack_db)
    good = _fresh(memory, "A good memory in a document that tries to move the LLM key")
    doc["memories"] = [good]
    doc["settings"] = {
        "ai.base_url": "https://collector.example.net/v1",
        "ai.provider": "openai",
        "ai.model": "gpt-4o-mini",
        "ai.api_key": "sk-planted-by-the-document",
        "no.such.setting": "1",
    }
    reply = await keyed.admin.post("/api/memories/import", json=doc)
    assert reply.status_code == 200, reply.text
    report = reply.json()
    skipped = {
        i["key"]: i["reason"]
        for i in report["items"]
        if i["section"] == "settings" and i["outcome"] == "skipped"
    }
    for key in ("ai.base_url", "ai.provider", "ai.model", "ai.api_key"):
        assert key in skipped, report
        assert "never restored" in skipped[key]
    assert "no.such.setting" in skipped
    after = await _settings(stack_db)
    for key in doc["settings"]:
        assert after.get(key) == before.get(key), key
    # The document's memories were restored: only its settings were left out.
    assert await _exists(stack_db, good["id"])
    await _search_works(keyed.admin, keyed.a)


PASS = "a long enough passphrase"


def _write_backup(folder: Path, memories: list[dict[str, Any]]) -> str:
    """An encrypted backup file as the service writes one, holding ``memories``: a file
    copied into the backups folder is as much data from outside as a request body."""
    now = datetime.now(UTC)
    name = files.new_name(now, scheduled=False)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / name).open("wb") as out:
        writer = crypto.EncryptingWriter(out, PASS)
        doc = document.DocumentWriter(writer.write, {"exported_at": now.isoformat()})
        doc.batch("memories", [json.dumps(m) for m in memories])
        doc.finish()
        writer.close()
    return name


async def test_a_backup_file_with_a_path_id_is_refused_and_fails_deep_verify(
    keyed: Keyed, stack_db: Db, exo_stack: Stack
) -> None:
    _, memory = await _document(keyed, "Backup files are restore documents too")
    good = _fresh(memory, "A good memory in a backup file with a bad one")
    bad = _fresh(memory, "A memory whose id is a path")
    bad["id"] = "../../../backup-escape"
    folder = Path(exo_stack.config.data_dir) / "backups"
    name = _write_backup(folder, [good, bad])
    try:
        await assert_refused_and_not_verified(keyed, stack_db, name, good["id"])
    finally:
        _remove(folder / name)  # other tests list the backups folder


def _remove(path: Path) -> None:
    path.unlink(missing_ok=True)


async def assert_refused_and_not_verified(keyed: Keyed, stack_db: Db, name: str, good: str) -> None:
    fast = await keyed.admin.post(f"/api/backups/{name}/verify", json={"passphrase": PASS})
    assert fast.json()["ok"] is True, fast.text  # the file itself is sound
    for dry_run in (True, False):
        reply = await keyed.admin.post(
            f"/api/backups/{name}/restore", json={"passphrase": PASS, "dry_run": dry_run}
        )
        assert reply.status_code == 400, reply.text
        assert reply.json()["field"] == "memories.1.id"
    assert not await _exists(stack_db, good)
    deep = await keyed.admin.post(
        f"/api/backups/{name}/verify", json={"passphrase": PASS, "deep": True}
    )
    assert deep.status_code == 200, deep.text
    assert deep.json()["ok"] is False
    assert any("memories.1.id" in p for p in deep.json()["problems"]), deep.json()
