"""A store naming ``parent_id`` (the original's chunk/parent relation), on the real stack: the
memory is kept as a part of an existing memory of the same namespace, found through it and not
listed on its own; an unknown parent, one of another namespace, a part of a memory or an
archived memory is a clear 4xx naming parent_id."""

from __future__ import annotations

import httpx

from exocortex.testing.keyed import Keyed
from exocortex.testing.rest import store


async def test_a_child_is_found_through_its_parent(api: httpx.AsyncClient, namespace: str) -> None:
    parent = await store(api, namespace, "Release checklist for the payments service.")
    reply = await api.post(
        "/api/memories",
        json={
            "content": "Rotate the webhook signing secret with the zebrafish runbook.",
            "namespace": namespace,
            "parent_id": parent,
        },
    )
    assert reply.status_code == 201, reply.text
    child = reply.json()
    assert child["parent_id"] == parent
    assert child["dedup_action"] == "created"
    assert child["indexed"] is True
    got = await api.get(f"/api/memories/{child['id']}")
    assert got.json()["parent_id"] == parent
    # Not listed on its own: the parent is the memory.
    recent = await api.get("/api/memories/recent", params={"namespace": namespace})
    assert [m["id"] for m in recent.json()["results"]] == [parent]
    # Its words find the parent.
    found = await api.post(
        "/api/memories/search",
        json={"query": "zebrafish runbook webhook secret", "namespace": namespace},
    )
    assert found.status_code == 200, found.text
    assert [r["memory"]["id"] for r in found.json()["results"]][:1] == [parent]
    # By keyword too: no word of the query is in the parent's own text.
    assert found.json()["results"][0]["score_breakdown"]["keyword_rank"] == 1


async def test_a_parent_that_is_not_an_active_memory_of_the_namespace_is_refused(
    api: httpx.AsyncClient, namespace: str
) -> None:
    parent = await store(api, namespace, "Runbook: restarting the ingest workers safely.")
    elsewhere = await store(api, f"{namespace}-other", "A note in another namespace entirely.")

    async def child_of(parent_id: str) -> httpx.Response:
        return await api.post(
            "/api/memories",
            json={"content": "A part.", "namespace": namespace, "parent_id": parent_id},
        )

    for missing in ("01NOTHEREATALL0000000000000", elsewhere):
        reply = await child_of(missing)
        assert reply.status_code == 404, reply.text
        assert reply.json()["field"] == "parent_id"
    first = await child_of(parent)
    assert first.status_code == 201, first.text
    nested = await child_of(first.json()["id"])
    assert nested.status_code == 400, nested.text
    assert nested.json()["field"] == "parent_id"
    archived = await api.post(f"/api/memories/{parent}/archive")
    assert archived.status_code == 200, archived.text
    gone = await child_of(parent)
    assert gone.status_code == 400, gone.text
    assert gone.json()["field"] == "parent_id"


async def test_a_scoped_key_cannot_name_a_parent_outside_its_namespace(keyed: Keyed) -> None:
    other = await keyed.admin.post(
        "/api/memories", json={"content": "Outside the key's scope.", "namespace": keyed.b}
    )
    assert other.status_code == 201, other.text
    reply = await keyed.rw.post(
        "/api/memories",
        json={"content": "A part.", "namespace": keyed.a, "parent_id": other.json()["id"]},
    )
    assert reply.status_code == 404, reply.text
    assert reply.json()["field"] == "parent_id"
