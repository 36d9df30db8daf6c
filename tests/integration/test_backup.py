"""Encrypted backups and the Obsidian vault through the whole stack."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.backup.service import verify_file
from exocortex.testing.keyed import Keyed, keyed

__all__ = ["keyed"]

PASS = "a long enough passphrase"


async def _store(api: httpx.AsyncClient, namespace: str, content: str, **extra: Any) -> str:
    reply = await api.post(
        "/api/memories", json={"content": content, "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


async def test_a_backup_is_written_encrypted_listed_and_verified(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    await _store(api, namespace, "Backups are encrypted with AES-256-GCM", tags=["backup"])
    await _store(api, namespace, "The scrypt key derivation is slow on purpose")
    await api.post("/api/goals", json={"title": "Never lose memory", "namespace": namespace})

    created = await api.post("/api/backups", json={"passphrase": PASS})
    assert created.status_code == 201, created.text
    backup = created.json()
    assert backup["scheduled"] is False
    assert backup["counts"]["memories"] >= 2
    assert backup["counts"]["goals"] >= 1
    path = Path(exo_stack.config.data_dir) / "backups" / backup["name"]
    raw = path.read_bytes()
    assert raw.startswith(b"EXOBAK")
    assert b"scrypt key derivation" not in raw  # nothing readable inside
    assert not list(path.parent.glob("*.partial"))

    listed = (await api.get("/api/backups")).json()["backups"]
    assert backup["name"] in [b["name"] for b in listed]

    verified = await api.post(f"/api/backups/{backup['name']}/verify", json={"passphrase": PASS})
    assert verified.status_code == 200, verified.text
    report = verified.json()
    assert report["ok"] is True, report["problems"]
    assert report["counts"] == backup["counts"]
    assert report["format_version"] == 2

    wrong = await api.post(
        f"/api/backups/{backup['name']}/verify", json={"passphrase": "not the passphrase"}
    )
    assert wrong.json()["ok"] is False
    assert "wrong passphrase" in wrong.json()["problems"][0]

    # A damaged copy fails verification offline too (python -m exocortex.maintenance.backup).
    damaged = path.with_name("damaged.exobak")
    damaged.write_bytes(raw[:-40] + bytes(b ^ 0xFF for b in raw[-40:]))
    try:
        assert verify_file(damaged, PASS).ok is False
        assert verify_file(path, PASS).ok is True
    finally:
        damaged.unlink()


async def test_bad_backup_requests_are_4xx(api: httpx.AsyncClient) -> None:
    assert (await api.post("/api/backups", json={"passphrase": "short"})).status_code == 400
    # No passphrase given and none configured on the service: a 400 saying what to set.
    missing = await api.post("/api/backups", json={})
    assert missing.status_code == 400
    assert "EXO_BACKUP_PASSPHRASE" in missing.text
    assert (await api.post("/api/backups/../../etc/passwd/verify")).status_code in (400, 404, 405)
    unknown = await api.post(
        "/api/backups/exocortex-20000101T000000Z.exobak/verify", json={"passphrase": PASS}
    )
    assert unknown.status_code == 404


async def test_backups_need_a_key_for_every_namespace(keyed: Keyed) -> None:
    assert (await keyed.rw.post("/api/backups", json={"passphrase": PASS})).status_code == 403
    assert (await keyed.ro.get("/api/backups")).status_code == 403


async def test_obsidian_vault_notes_with_front_matter_wikilinks_and_increments(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    first = await _store(api, namespace, "Obsidian vault export writes Markdown", tags=["vault"])
    second = await _store(api, namespace, "Wikilinks connect notes in the vault")
    linked = await api.post(
        f"/api/memories/{first}/links", json={"target_id": second, "link_type": "related"}
    )
    assert linked.status_code in (200, 201), linked.text

    full = await api.post("/api/export/obsidian", json={"full": True})
    assert full.status_code == 200, full.text
    report = full.json()
    assert report["incremental"] is False
    vault = Path(report["vault"])
    assert vault == Path(exo_stack.config.data_dir) / "obsidian"
    note = (vault / "Memories" / f"{first}.md").read_text()
    head, body = note.split("---\n")[1], note.split("---\n", 2)[2]
    fields = {
        line.split(": ", 1)[0]: json.loads(line.split(": ", 1)[1]) for line in head.splitlines()
    }
    assert fields["id"] == first
    assert fields["tags"] == ["vault"]
    assert fields["namespace"] == namespace
    assert fields["created"].endswith("Z")
    assert any(link.startswith(f"[[{second}|") for link in fields["linked_memories"])
    assert "Obsidian vault export writes Markdown" in body
    assert (vault / "_Dashboard.md").read_text().count("```dataview") == 4
    state = json.loads((vault / ".obsidian-sync-state.json").read_text())
    assert state["last_sync"]

    patched = await api.patch(f"/api/memories/{second}", json={"content": "Wikilinks, edited"})
    assert patched.status_code == 200, patched.text
    again = (await api.post("/api/export/obsidian", json={})).json()
    assert again["incremental"] is True
    assert again["memories_written"] >= 1
    assert "\n\nWikilinks, edited\n" in (vault / "Memories" / f"{second}.md").read_text()
    updated = patched.json()["updated_at"]
    mtime = os.stat(vault / "Memories" / f"{second}.md").st_mtime
    assert abs(datetime.fromisoformat(updated.replace("Z", "+00:00")).timestamp() - mtime) < 1
