"""Deep verify: a backup restored into a scratch database of the stack's Postgres, its rows
compared with the manifest, the scratch database dropped after."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
import pytest
from psycopg import sql

from exocortex.core.backup_format import crypto
from exocortex.core.backup_format.document import lines
from exocortex.core.runtime.stack import Stack
from exocortex.maintenance.backup import files
from exocortex.maintenance.backup.scratch_repository import ScratchUnavailable, scratch_database

PASS = "a long enough passphrase"


async def _store(api: httpx.AsyncClient, namespace: str, content: str, **extra: Any) -> str:
    reply = await api.post(
        "/api/memories", json={"content": content, "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


def _scratch_databases(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'exo_verify_%'"
        ).fetchall()
    return [row[0] for row in rows]


def _tampered_copy(path: Path, section: str) -> Path:
    """The backup decrypted, its manifest's count of ``section`` raised by one, and encrypted
    again with the backup code itself: a file whose chunks all decrypt."""
    with path.open("rb") as source:
        text = list(lines(crypto.decrypt_chunks(source, PASS)))
    manifest = json.loads(text[-1])
    manifest["manifest"]["counts"][section] += 1
    text[-1] = json.dumps(manifest, separators=(",", ":")).encode()
    # A name of its own, a minute after the original, that the backup routes accept.
    name = files.new_name(datetime.now(UTC) + timedelta(minutes=1), scheduled=False)
    copy = path.with_name(name)
    with copy.open("wb") as out:
        writer = crypto.EncryptingWriter(out, PASS)
        writer.write(b"\n".join(text) + b"\n")
        writer.close()
    return copy


async def test_deep_verify_restores_into_a_scratch_database_and_drops_it(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    first = await _store(api, namespace, "Deep verify restores the backup", tags=["verify"])
    second = await _store(api, namespace, "The scratch database is dropped after")
    linked = await api.post(
        f"/api/memories/{first}/links", json={"target_id": second, "link_type": "related"}
    )
    assert linked.status_code in (200, 201), linked.text
    goal = await api.post(
        "/api/goals", json={"title": "Verify every backup", "namespace": namespace}
    )
    assert goal.status_code == 201, goal.text

    created = await api.post("/api/backups", json={"passphrase": PASS})
    assert created.status_code == 201, created.text
    backup = created.json()

    fast = (
        await api.post(f"/api/backups/{backup['name']}/verify", json={"passphrase": PASS})
    ).json()
    assert fast["ok"] is True
    assert fast["deep"] is False
    assert fast["restored_counts"] is None

    deep = await api.post(
        f"/api/backups/{backup['name']}/verify", json={"passphrase": PASS, "deep": True}
    )
    assert deep.status_code == 200, deep.text
    report = deep.json()
    assert report["ok"] is True, report["problems"]
    assert report["deep"] is True
    restored = report["restored_counts"]
    for section in ("memories", "memory_links", "goals"):
        assert restored[section] == backup["counts"][section] > 0, section
    assert _scratch_databases(exo_stack.database_url) == []

    path = Path(exo_stack.config.data_dir) / "backups" / backup["name"]
    tampered = _tampered_copy(path, "goals")
    try:
        bad = await api.post(
            f"/api/backups/{tampered.name}/verify", json={"passphrase": PASS, "deep": True}
        )
        assert bad.status_code == 200, bad.text
        result = bad.json()
        assert result["ok"] is False
        assert result["deep"] is True
        scratch = [p for p in result["problems"] if "scratch database" in p]
        wanted = backup["counts"]["goals"]
        assert scratch == [
            f"goals: {wanted} rows restored into the scratch database, "
            f"the manifest says {wanted + 1}"
        ], result["problems"]
        assert _scratch_databases(exo_stack.database_url) == []
    finally:
        tampered.unlink()


async def test_a_role_without_createdb_is_told_what_to_grant(exo_stack: Stack) -> None:
    role = "exo_no_createdb_" + secrets.token_hex(4)
    with psycopg.connect(exo_stack.database_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOCREATEDB PASSWORD {}").format(
                sql.Identifier(role), sql.Literal(role)
            )
        )
    try:
        parts = urlsplit(exo_stack.database_url)
        host = parts.hostname or "127.0.0.1"
        limited = urlunsplit(parts._replace(netloc=f"{role}:{role}@{host}:{parts.port}"))
        with pytest.raises(ScratchUnavailable, match="CREATEDB"):
            async with scratch_database(limited):
                pass
        assert _scratch_databases(exo_stack.database_url) == []
    finally:
        with psycopg.connect(exo_stack.database_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))
