"""The streamed JSON backup over HTTP."""

from __future__ import annotations

import httpx


async def test_export_holds_every_section_of_a_namespace(
    api: httpx.AsyncClient, namespace: str
) -> None:
    memory = (
        await api.post(
            "/api/memories",
            json={
                "content": "Export me with all my fields",
                "namespace": namespace,
                "tags": ["backup"],
                "valence": 0.5,
                "expires_at": "2030-01-01T00:00:00Z",
            },
        )
    ).json()
    goal = (await api.post("/api/goals", json={"title": "Back up", "namespace": namespace})).json()
    await api.post(f"/api/goals/{goal['id']}/milestones", json={"title": "first"})
    progress = (
        await api.post(f"/api/goals/{goal['id']}/progress", json={"content": "Took a backup"})
    ).json()
    entity = (
        await api.post("/api/entities", json={"name": "Backup", "namespace": namespace})
    ).json()

    reply = await api.get("/api/export", params={"namespace": namespace})
    assert reply.status_code == 200
    assert reply.headers["content-disposition"].startswith(
        'attachment; filename="exocortex-backup-'
    )
    doc = reply.json()
    assert doc["version"] == 2
    assert doc["namespace"] == namespace
    by_id = {m["id"]: m for m in doc["memories"]}
    exported = by_id[memory["id"]]
    assert exported["valence"] == 0.5
    assert exported["tags"] == ["backup"]
    assert exported["expires_at"].startswith("2030-01-01")
    assert "content_hash" in exported
    assert "embedding" not in exported
    assert progress["memory"]["id"] in by_id
    assert {m["namespace"] for m in doc["memories"]} == {namespace}
    assert [g["id"] for g in doc["goals"]] == [goal["id"]]
    assert [m["title"] for m in doc["goal_milestones"]] == ["first"]
    assert doc["goal_links"][0]["memory_id"] == progress["memory"]["id"]
    assert doc["goal_links"][0]["kind"] == "explicit"
    assert entity["id"] in {e["id"] for e in doc["entities"]}
    for section in (
        "memory_links",
        "memory_entities",
        "entity_relationships",
        "contradictions",
        "consolidations",
    ):
        assert isinstance(doc[section], list)
    assert doc["settings"]["scoring.rrf_k"]


async def test_export_of_everything_includes_other_namespaces(
    api: httpx.AsyncClient, namespace: str
) -> None:
    await api.post("/api/memories", json={"content": "In the full export", "namespace": namespace})
    doc = (await api.get("/api/export")).json()
    assert doc["namespace"] is None
    assert namespace in {m["namespace"] for m in doc["memories"]}
