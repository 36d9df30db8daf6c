"""Manual entity edits over HTTP against the real stack."""

from __future__ import annotations

import httpx


async def test_create_patch_delete(api: httpx.AsyncClient, namespace: str) -> None:
    created = await api.post(
        "/api/entities",
        json={
            "name": "PostgreSQL",
            "type": "technology",
            "aliases": ["Postgres", "pg"],
            "tags": ["Databases"],
            "metadata": {"since": 2024},
            "namespace": namespace,
        },
    )
    assert created.status_code == 201, created.text
    entity = created.json()
    assert entity["type"] == "technology"
    assert entity["aliases"] == ["Postgres", "pg"]
    assert entity["tags"] == ["databases"]
    assert entity["namespace"] == namespace

    clash = await api.post("/api/entities", json={"name": "postgresql", "namespace": namespace})
    assert clash.status_code == 409
    assert clash.json()["field"] == "name"
    # Names are unique per namespace only.
    other = await api.post(
        "/api/entities", json={"name": "PostgreSQL", "namespace": f"{namespace}-2"}
    )
    assert other.status_code == 201

    patched = await api.patch(
        f"/api/entities/{entity['id']}",
        json={"type": "project", "aliases": [], "tags": ["work"], "metadata": {}},
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["type"] == "project"
    assert body["aliases"] == []
    assert body["tags"] == ["work"]
    assert body["metadata"] == {}
    assert body["name"] == "PostgreSQL"

    renamed = await api.patch(f"/api/entities/{entity['id']}", json={"name": "Postgres 18"})
    assert renamed.json()["name"] == "Postgres 18"

    assert (await api.delete(f"/api/entities/{entity['id']}")).json() == {"ok": True}
    gone = await api.delete(f"/api/entities/{entity['id']}")
    assert gone.status_code == 404
    missing = await api.patch(f"/api/entities/{entity['id']}", json={"name": "x"})
    assert missing.status_code == 404


async def test_rename_onto_existing_name_conflicts(api: httpx.AsyncClient, namespace: str) -> None:
    a = (await api.post("/api/entities", json={"name": "Alpha", "namespace": namespace})).json()
    await api.post("/api/entities", json={"name": "Beta", "namespace": namespace})
    clash = await api.patch(f"/api/entities/{a['id']}", json={"name": "BETA"})
    assert clash.status_code == 409


async def test_invalid_input(api: httpx.AsyncClient, namespace: str) -> None:
    reply = await api.post("/api/entities", json={"name": "x", "type": "animal"})
    assert reply.status_code == 400
    assert reply.json()["field"] == "type"
    reply = await api.post("/api/entities", json={"name": "   ", "namespace": namespace})
    assert reply.status_code == 400
    assert reply.json()["field"] == "name"
    reply = await api.post(
        "/api/entities", json={"name": "x", "aliases": [" "], "namespace": namespace}
    )
    assert reply.status_code == 400
    assert reply.json()["field"] == "aliases.0"
