"""A dry run of POST /api/memories/import never writes: an export document is reported and
left unrestored, and a list of new memories (which has no dry run) is refused with a 400 naming
``dry_run``, nothing of it stored; sent without it, the same list is imported."""

from __future__ import annotations

from typing import Any

import httpx
import psycopg

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def _count(db: Conn, namespace: str) -> int:
    cur = await db.execute("SELECT count(*) AS n FROM memories WHERE namespace = %s", (namespace,))
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"])


async def test_a_dry_run_of_a_list_of_new_memories_is_refused_and_stores_nothing(
    api: httpx.AsyncClient, stack_db: Conn, namespace: str
) -> None:
    body = {"memories": [{"content": "A dry-run note about herons", "namespace": namespace}]}
    refused = await api.post("/api/memories/import", params={"dry_run": "true"}, json=body)
    assert refused.status_code == 400, refused.text
    problem = refused.json()
    assert problem["field"] == "dry_run", problem
    assert "export documents only" in problem["detail"]
    assert await _count(stack_db, namespace) == 0

    imported = await api.post("/api/memories/import", json=body)
    assert imported.status_code == 200, imported.text
    assert imported.json()["imported"] == 1
    assert await _count(stack_db, namespace) == 1
