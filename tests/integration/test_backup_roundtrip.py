"""Backup → wipe → restore gives back the same store: the export of a namespace holding every
kind of object is equal field by field (ids and timestamps included) before and after, a second
restore changes nothing, a dry run writes nothing, and searches give the same top 10."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.core.ids import new_id
from exocortex.testing.rest import wait_enriched

Db = psycopg.AsyncConnection[dict[str, Any]]
PASS = "round trip passphrase"
QUERIES = ["kubernetes deployment rollout", "postgres backups", "team meeting notes"]
LONG = " ".join(
    f"Paragraph {i}: the deployment pipeline builds images, runs migrations and rolls out "
    f"kubernetes pods one zone at a time while health checks watch the error rate." * 2
    for i in range(12)
)


async def _store(api: httpx.AsyncClient, ns: str, content: str, **extra: Any) -> str:
    reply = await api.post("/api/memories", json={"content": content, "namespace": ns, **extra})
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


async def _export(api: httpx.AsyncClient, ns: str) -> dict[str, Any]:
    doc: dict[str, Any] = (await api.get("/api/export", params={"namespace": ns})).json()
    doc.pop("exported_at")
    return doc


async def _top10(api: httpx.AsyncClient, ns: str) -> list[list[str]]:
    tops = []
    for query in QUERIES:
        reply = await api.post(
            "/api/memories/search",
            # compact: no access is counted, so searching does not change the export
            json={"query": query, "namespace": ns, "limit": 10, "compact": True},
        )
        assert reply.status_code == 200, reply.text
        tops.append([r["id"] for r in reply.json()["results"]])
    return tops


async def _seed(api: httpx.AsyncClient, db: Db, ns: str) -> None:
    ids = [
        await _store(api, ns, LONG, tags=["deploy", "kubernetes"], importance=0.8),
        await _store(api, ns, "Postgres backups run nightly with pg_dump", tags=["postgres"]),
        await _store(api, ns, "Alice leads the team meeting notes on Mondays", valence=0.4),
        await _store(api, ns, "Postgres backups are encrypted", expires_at="2031-01-01T00:00:00Z"),
    ]
    await api.post(f"/api/memories/{ids[1]}/links", json={"target_id": ids[3]})
    goal = (await api.post("/api/goals", json={"title": "Reliable ops", "namespace": ns})).json()
    await api.post(f"/api/goals/{goal['id']}/milestones", json={"title": "nightly backups"})
    progress = await api.post(
        f"/api/goals/{goal['id']}/progress", json={"content": "Backups verified"}
    )
    assert progress.status_code in (200, 201), progress.text
    await api.post("/api/entities", json={"name": "Kubernetes", "namespace": ns})
    for memory_id in [*ids, progress.json()["memory"]["id"]]:
        await wait_enriched(api, memory_id)
    await db.execute(
        "INSERT INTO contradictions (id, memory_a_id, memory_b_id, description)"
        " VALUES (%s, %s, %s, 'nightly or encrypted?')",
        (new_id(), ids[1], ids[3]),
    )
    await db.execute(
        "INSERT INTO consolidations (id, namespace, summary_id, source_ids, strategy,"
        " memories_merged) VALUES (%s, %s, %s, %s, 'similarity', 2)",
        (new_id(), ns, ids[2], [ids[0], ids[1]]),
    )
    # A usage count the restore must keep.
    await db.execute("INSERT INTO memory_usage (memory_id, access_count) VALUES (%s, 3)", (ids[1],))


async def _embeddings(db: Db, ns: str) -> dict[str, tuple[str, bytes]]:
    rows = await (
        await db.execute(
            "SELECT id, embedding_model, embedding FROM memories"
            " WHERE namespace = %s AND embedding IS NOT NULL",
            (ns,),
        )
    ).fetchall()
    return {r["id"]: (r["embedding_model"], bytes(r["embedding"])) for r in rows}


async def _wipe(db: Db, ns: str) -> None:
    await db.execute(
        "DELETE FROM consolidations c USING memories m WHERE m.id = c.summary_id"
        " AND m.namespace = %s",
        (ns,),
    )
    await db.execute("DELETE FROM goals WHERE namespace = %s", (ns,))
    await db.execute("DELETE FROM entities WHERE namespace = %s", (ns,))
    await db.execute("DELETE FROM memories WHERE namespace = %s AND parent_id IS NOT NULL", (ns,))
    await db.execute("DELETE FROM memories WHERE namespace = %s", (ns,))


async def _restore(api: httpx.AsyncClient, name: str, dry_run: bool = False) -> dict[str, Any]:
    reply = await api.post(
        f"/api/backups/{name}/restore", json={"passphrase": PASS, "dry_run": dry_run}
    )
    assert reply.status_code == 200, reply.text
    report: dict[str, Any] = reply.json()
    return report


async def test_backup_wipe_restore_gives_back_the_same_store(
    api: httpx.AsyncClient, stack_db: Db, namespace: str
) -> None:
    await _seed(api, stack_db, namespace)
    before = await _export(api, namespace)
    assert len(before["memories"]) > 5  # chunks and goal progress included
    for section in (
        "memory_links",
        "entities",
        "goals",
        "goal_milestones",
        "goal_links",
        "contradictions",
        "consolidations",
    ):
        assert before[section], section
    tops = await _top10(api, namespace)
    assert all(tops)

    # With embeddings: the restore reuses them (same model) instead of embedding again.
    backup = (
        await api.post("/api/backups", json={"passphrase": PASS, "include_embeddings": True})
    ).json()
    embedded_before = await _embeddings(stack_db, namespace)
    assert embedded_before
    await _wipe(stack_db, namespace)
    assert (await _export(api, namespace))["memories"] == []

    dry = await _restore(api, backup["name"], dry_run=True)
    assert dry["dry_run"] is True
    assert dry["sections"]["memories"]["created"] >= len(before["memories"])
    assert (await _export(api, namespace))["memories"] == []  # nothing written

    restored = await _restore(api, backup["name"])
    assert restored["sections"]["memories"]["created"] == len(before["memories"])
    assert restored["sections"]["goals"]["created"] == len(before["goals"])
    after = await _export(api, namespace)
    for section, rows in before.items():
        assert after[section] == rows, section
    assert await _embeddings(stack_db, namespace) == embedded_before

    again = await _restore(api, backup["name"])
    assert all(s["created"] == 0 for s in again["sections"].values()), again["sections"]
    assert await _export(api, namespace) == before

    # The export document itself is accepted by POST /api/memories/import, restored the same way.
    # (this time with embeddings, which the import reuses: the same model made them).
    document = (
        await api.get("/api/export", params={"namespace": namespace, "include_embeddings": True})
    ).json()
    assert all("embedding" in m for m in document["memories"] if m["embedding_model"])
    await _wipe(stack_db, namespace)
    dry_import = await api.post("/api/memories/import", params={"dry_run": True}, json=document)
    assert dry_import.status_code == 200, dry_import.text
    assert dry_import.json()["dry_run"] is True
    assert (await _export(api, namespace))["memories"] == []
    imported = await api.post("/api/memories/import", json=document)
    assert imported.status_code == 200, imported.text
    report = imported.json()
    assert report["sections"]["memories"]["created"] == len(before["memories"])
    assert await _export(api, namespace) == before
    assert await _embeddings(stack_db, namespace) == embedded_before
    second = (await api.post("/api/memories/import", json=document)).json()
    assert all(s["created"] == 0 for s in second["sections"].values())

    # The restored memories are indexed again from their stored events.
    for _ in range(120):
        if await _top10(api, namespace) == tops:
            break
        await asyncio.sleep(0.5)
    assert await _top10(api, namespace) == tops


async def test_a_bad_item_in_an_export_document_refuses_the_whole_document(
    api: httpx.AsyncClient, stack_db: Db, namespace: str
) -> None:
    """An edited or damaged export document (an item without its keys, a key of the wrong type,
    a value no live write would take) is refused with a 400 naming the first bad item's field,
    before anything is written: its good items are not restored either. The same document
    without the bad items restores."""
    memory_id = await _store(api, namespace, "The staging cluster is rebuilt every Friday night.")
    document = await _export(api, namespace)
    good = next(m for m in document["memories"] if m["id"] == memory_id)
    await _wipe(stack_db, namespace)
    bad_date = {**good, "id": good["id"][:-4] + "ZZZZ", "created_at": "not a date"}
    for bad, field in [
        ({"W": [True, 1], "": {"x": "y"}}, "memories.1.id"),  # no key at all
        ({**good, "id": good["id"][:-4] + "YYYY", "version": "seven"}, "memories.1.version"),
        (bad_date, "memories.1.created_at"),
    ]:
        document["memories"] = [good, bad]
        reply = await api.post("/api/memories/import", json=document)
        assert reply.status_code == 400, reply.text
        assert reply.json()["field"] == field
        assert (await api.get(f"/api/memories/{memory_id}")).status_code == 404
    document["memories"] = [good]
    reply = await api.post("/api/memories/import", json=document)
    assert reply.status_code == 200, reply.text
    assert reply.json()["sections"]["memories"]["created"] == 1
    restored = await api.get(f"/api/memories/{memory_id}")
    assert restored.status_code == 200, restored.text
