"""File outputs: every file the product writes under a name made from data stays inside its
folder, whatever the data says. The Obsidian vault is named by ids, titles and entity names; a
row with an odd id (``../../x``, an absolute path) is written into the database directly here,
past every check of a write or a restore, to prove the writers hold on their own."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest_asyncio

from exocortex.cli import exporters
from exocortex.core.backup_format import crypto
from exocortex.core.backup_format import document as backup_document
from exocortex.core.ids import new_id
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.backup import files as backup_files

Db = psycopg.AsyncConnection[dict[str, Any]]


@dataclass(frozen=True)
class OddRows:
    """Rows whose ids and names lead out of any folder they are joined to."""

    namespace: str
    relative: str  # "../../escape-<ns>"
    absolute: str  # "<tmp>/absolute-<ns>"
    entity_name: str
    goal_title: str
    contradiction: str


@pytest_asyncio.fixture
async def odd_rows(stack_db: Db, namespace: str, tmp_path: Path) -> AsyncIterator[OddRows]:
    rows = OddRows(
        namespace=namespace,
        relative=f"../../escape-{namespace}",
        absolute=str(tmp_path / "outside" / f"absolute-{namespace}"),
        entity_name=f"../../entity-{namespace}",
        goal_title=f"../../goal-{namespace}",
        contradiction=f"../../contradiction-{namespace}",
    )
    memories = [rows.relative, rows.absolute]
    entity_id = f"/tmp/entity-{namespace}"
    goal_id = f"../goal-id-{namespace}"
    try:
        for memory_id in memories:
            await stack_db.execute(
                "INSERT INTO memories (id, namespace, content, enrichment_status) "
                "VALUES (%s, %s, %s, 'done')",
                (memory_id, namespace, f"An odd row written past every check: {memory_id}"),
            )
        await stack_db.execute(
            "INSERT INTO entities (id, namespace, name, type) VALUES (%s, %s, %s, 'concept')",
            (entity_id, namespace, rows.entity_name),
        )
        await stack_db.execute(
            "INSERT INTO memory_entities (memory_id, entity_id, relevance) VALUES (%s, %s, 1)",
            (rows.relative, entity_id),
        )
        await stack_db.execute(
            "INSERT INTO goals (id, namespace, title) VALUES (%s, %s, %s)",
            (goal_id, namespace, rows.goal_title),
        )
        await stack_db.execute(
            "INSERT INTO contradictions (id, memory_a_id, memory_b_id, description) "
            "VALUES (%s, %s, %s, 'odd')",
            (rows.contradiction, rows.relative, rows.absolute),
        )
        yield rows
    finally:
        await stack_db.execute("DELETE FROM goals WHERE id = %s", (goal_id,))
        await stack_db.execute("DELETE FROM entities WHERE id = %s", (entity_id,))
        await stack_db.execute("DELETE FROM memories WHERE id = ANY(%s)", (memories,))


def _files_named_for(root: Path, namespace: str) -> list[Path]:
    return [p for p in root.rglob(f"*{namespace}*") if p.is_file()]


def _server_vault_is_contained(vault: Path, rows: OddRows, tmp_path: Path) -> None:
    # Where joining the raw ids would have put the notes.
    for name in (rows.relative, rows.contradiction):
        for folder in ("Memories", "Contradictions"):
            assert not (vault / folder / f"{name}.md").resolve().exists(), name
    assert not Path(f"{rows.absolute}.md").exists()
    assert not (tmp_path / "outside").exists()
    # The odd rows are in the vault, under sanitized names, and only there.
    written = _files_named_for(vault, rows.namespace)
    assert written, "the odd rows' notes are missing from the vault"
    for path in written:
        assert path.resolve().is_relative_to(vault.resolve()), path
        assert ".." not in path.relative_to(vault).parts
    notes = [p.read_text() for p in written if p.parent.name == "Memories"]
    assert any(rows.relative in text for text in notes)
    assert any(rows.absolute in text for text in notes)
    outside = _files_named_for(vault.parent, rows.namespace)
    assert all(p.resolve().is_relative_to(vault.resolve()) for p in outside), outside


async def test_the_server_vault_never_writes_outside_itself(
    api: httpx.AsyncClient, odd_rows: OddRows, tmp_path: Path
) -> None:
    reply = await api.post("/api/export/obsidian", json={"full": True})
    assert reply.status_code == 200, reply.text
    _server_vault_is_contained(Path(reply.json()["vault"]), odd_rows, tmp_path)


def _cli_vault_is_contained(document: dict[str, Any], rows: OddRows, tmp_path: Path) -> None:
    target = tmp_path / "vault"
    report = exporters.obsidian(document, target, lambda _n: None)
    root = target / exporters.VAULT_FOLDER
    assert report.written >= 2
    assert not (tmp_path / "outside").exists()
    assert not Path(f"{rows.absolute}.md").exists()
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert path.resolve().is_relative_to(root.resolve()), path


async def test_the_cli_vault_never_writes_outside_itself(
    api: httpx.AsyncClient, odd_rows: OddRows, tmp_path: Path
) -> None:
    """``exo export -f obsidian`` writes from the export document: the same odd rows, read
    back through GET /api/export, stay inside the vault's folder."""
    reply = await api.get("/api/export", params={"namespace": odd_rows.namespace})
    assert reply.status_code == 200, reply.text
    document = reply.json()
    assert {m["id"] for m in document["memories"]} >= {odd_rows.relative, odd_rows.absolute}
    _cli_vault_is_contained(document, odd_rows, tmp_path)


def test_the_cli_vault_sanitizes_every_name_from_the_document(tmp_path: Path) -> None:
    """A document edited by hand (no stack needed): ids, entity names and goal titles that
    are paths, NUL, reserved names."""
    document = {
        "memories": [
            {"id": "../../m1", "namespace": "n", "content": "one", "content_type": "text",
             "created_at": "2026-01-01T00:00:00Z"},
            {"id": str(tmp_path / "abs"), "namespace": "n", "content": "two",
             "content_type": "text", "created_at": "2026-01-01T00:00:00Z"},
            {"id": "CON", "namespace": "n", "content": "three", "content_type": "text",
             "created_at": "2026-01-01T00:00:00Z"},
        ],
        "entities": [{"id": "e1", "name": "../../../etc/cron.d/x"}, {"id": "e2", "name": "a\x00b"}],
        "memory_entities": [{"memory_id": "../../m1", "entity_id": "e1"}],
        "goals": [{"id": "/../../../g", "title": "/etc/passwd"}],
        "goal_milestones": [],
        "memory_links": [{"source_id": "../../m1", "target_id": "/x", "link_type": "related"}],
    }  # fmt: skip
    target = tmp_path / "vault"
    report = exporters.obsidian(document, target, lambda _n: None)
    root = (target / exporters.VAULT_FOLDER).resolve()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert report.written == len(files) == 6
    for path in files:
        assert path.resolve().is_relative_to(root), path
    assert not (tmp_path / "abs.md").exists()
    assert (target / exporters.VAULT_FOLDER / "memories" / "_CON.md").is_file()


BACKUP_PASSPHRASE = "a long enough passphrase"


def _backup_outside(folder: Path, memory: dict[str, Any]) -> Path:
    """A sound encrypted backup, as the service writes one, in ``folder`` (outside the
    backups folder): read through a link, it would verify and restore."""
    now = datetime.now(UTC)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / backup_files.new_name(now, scheduled=False)
    with path.open("wb") as out:
        writer = crypto.EncryptingWriter(out, BACKUP_PASSPHRASE)
        doc = backup_document.DocumentWriter(writer.write, {"exported_at": now.isoformat()})
        doc.batch("memories", [json.dumps(memory)])
        doc.finish()
        writer.close()
    return path


async def test_a_backup_name_linked_out_of_the_backups_folder_is_refused(
    api: httpx.AsyncClient, exo_stack: Stack, stack_db: Db, namespace: str, tmp_path: Path
) -> None:
    """A caller names a backup from the list; a link in the backups folder under a backup's
    name that leads elsewhere is not followed, to verify or to restore."""
    memory = {
        "id": new_id(),
        "namespace": namespace,
        "content": "A memory in a backup kept outside the backups folder",
        "created_at": datetime.now(UTC).isoformat(),
    }
    outside = _backup_outside(tmp_path / "elsewhere", memory)
    link = Path(exo_stack.config.data_dir) / "backups" / outside.name
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    try:
        verified = await api.post(
            f"/api/backups/{link.name}/verify", json={"passphrase": BACKUP_PASSPHRASE}
        )
        assert verified.status_code == 400, verified.text
        assert verified.json()["field"] == "name"
        for dry_run in (True, False):
            restored = await api.post(
                f"/api/backups/{link.name}/restore",
                json={"passphrase": BACKUP_PASSPHRASE, "dry_run": dry_run},
            )
            assert restored.status_code == 400, restored.text
            assert restored.json()["field"] == "name"
    finally:
        link.unlink()  # other tests list the backups folder
    cur = await stack_db.execute("SELECT 1 FROM memories WHERE id = %s", (memory["id"],))
    assert await cur.fetchone() is None
