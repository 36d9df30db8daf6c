"""Goals, milestones and progress over HTTP against the real stack."""

from __future__ import annotations

import httpx


async def _goal(api: httpx.AsyncClient, namespace: str, **extra: object) -> dict[str, object]:
    reply = await api.post(
        "/api/goals", json={"title": "Ship the dashboard", "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    body: dict[str, object] = reply.json()
    return body


async def test_create_get_list_and_status_filter(api: httpx.AsyncClient, namespace: str) -> None:
    goal = await _goal(
        api,
        namespace,
        description="memories, goals, graph",
        priority="high",
        deadline="2026-12-31T00:00:00+00:00",
        metadata={"owner": "sam"},
    )
    assert goal["status"] == "active"
    assert goal["priority"] == "high"
    assert goal["completed_at"] is None
    assert goal["milestones"] == []
    done = await _goal(api, namespace, status="completed")
    assert done["completed_at"] is not None

    fetched = (await api.get(f"/api/goals/{goal['id']}")).json()
    assert fetched["description"] == "memories, goals, graph"
    assert fetched["deadline"].startswith("2026-12-31")
    assert fetched["metadata"] == {"owner": "sam"}

    active = (await api.get("/api/goals", params={"namespace": namespace})).json()
    assert [g["id"] for g in active["results"]] == [goal["id"]]
    every = (await api.get("/api/goals", params={"namespace": namespace, "status": "all"})).json()
    assert {g["id"] for g in every["results"]} == {goal["id"], done["id"]}
    assert every["count"] == 2
    elsewhere = (await api.get("/api/goals", params={"namespace": f"{namespace}-x"})).json()
    assert elsewhere["results"] == []


async def test_patch_sets_and_clears(api: httpx.AsyncClient, namespace: str) -> None:
    goal = await _goal(
        api, namespace, description="text", deadline="2027-01-01T00:00:00Z", metadata={"a": 1}
    )
    patched = await api.patch(
        f"/api/goals/{goal['id']}",
        json={"status": "completed", "metadata": {"a": None, "b": 2}, "title": "Renamed"},
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert body["status"] == "completed"
    assert body["completed_at"] is not None
    assert body["metadata"] == {"b": 2}
    assert body["title"] == "Renamed"
    assert body["description"] == "text"  # untouched: not sent

    cleared = (
        await api.patch(
            f"/api/goals/{goal['id']}",
            json={"status": "active", "description": None, "deadline": None},
        )
    ).json()
    assert cleared["status"] == "active"
    assert cleared["completed_at"] is None
    assert cleared["description"] is None
    assert cleared["deadline"] is None


async def test_milestones_are_ordered_and_complete(api: httpx.AsyncClient, namespace: str) -> None:
    goal = await _goal(api, namespace)
    gid = goal["id"]
    first = (await api.post(f"/api/goals/{gid}/milestones", json={"title": "design"})).json()
    second = (await api.post(f"/api/goals/{gid}/milestones", json={"title": "build"})).json()
    assert [m["title"] for m in second["milestones"]] == ["design", "build"]
    assert [m["order"] for m in second["milestones"]] == [1, 2]  # numbered from 1, as the original
    first_id = first["milestones"][0]["id"]

    moved = await api.patch(f"/api/goals/{gid}/milestones/{first_id}", json={"order": 5})
    assert [m["title"] for m in moved.json()["milestones"]] == ["build", "design"]
    completed = (
        await api.patch(f"/api/goals/{gid}/milestones/{first_id}", json={"status": "completed"})
    ).json()
    design = next(m for m in completed["milestones"] if m["id"] == first_id)
    assert design["status"] == "completed"
    assert design["completed_at"] is not None

    removed = await api.delete(f"/api/goals/{gid}/milestones/{first_id}")
    assert [m["title"] for m in removed.json()["milestones"]] == ["build"]
    again = await api.delete(f"/api/goals/{gid}/milestones/{first_id}")
    assert again.status_code == 404
    assert again.json()["field"] == "milestone_id"


async def test_progress_is_an_ordinary_searchable_note(
    api: httpx.AsyncClient, namespace: str
) -> None:
    goal = await _goal(api, namespace)
    logged = await api.post(
        f"/api/goals/{goal['id']}/progress",
        json={"content": "Wired the goals page to the milestone endpoints", "importance": 0.7},
    )
    assert logged.status_code == 201, logged.text
    body = logged.json()
    memory = body["memory"]
    assert memory["content_type"] == "note"
    assert memory["namespace"] == namespace
    assert memory["is_metadata"] is False
    # Tagged as the original tagged progress notes, yet not demoted as a metadata memory.
    assert "goal-progress" in memory["tags"]
    assert body["goal"]["progress_count"] == 1

    fetched = (await api.get(f"/api/goals/{goal['id']}")).json()
    assert [m["id"] for m in fetched["progress"]] == [memory["id"]]

    found = (
        await api.post(
            "/api/memories/search",
            json={"query": "goals page milestone endpoints", "namespace": namespace},
        )
    ).json()
    assert found["results"][0]["memory"]["id"] == memory["id"]
    # Not demoted as a metadata memory.
    assert found["results"][0]["score_breakdown"]["metadata_penalty"] == 1.0


async def test_delete_and_unknown_ids(api: httpx.AsyncClient, namespace: str) -> None:
    goal = await _goal(api, namespace)
    assert (await api.delete(f"/api/goals/{goal['id']}")).json() == {"ok": True}
    for method, path, body in (
        ("GET", f"/api/goals/{goal['id']}", None),
        ("PATCH", f"/api/goals/{goal['id']}", {"title": "x"}),
        ("DELETE", f"/api/goals/{goal['id']}", None),
        ("POST", f"/api/goals/{goal['id']}/progress", {"content": "x"}),
        ("POST", f"/api/goals/{goal['id']}/milestones", {"title": "x"}),
    ):
        reply = await api.request(method, path, json=body)
        assert reply.status_code == 404, (method, path, reply.text)
        assert reply.headers["content-type"].startswith("application/problem+json")


async def test_bad_input_names_the_field(api: httpx.AsyncClient, namespace: str) -> None:
    reply = await api.post("/api/goals", json={"title": "", "namespace": namespace})
    assert reply.status_code == 400
    assert reply.json()["field"] == "title"
    reply = await api.post("/api/goals", json={"title": "x", "priority": "urgent"})
    assert reply.status_code == 400
    assert reply.json()["field"] == "priority"
    reply = await api.get("/api/goals", params={"status": "done"})
    assert reply.status_code == 400
    assert reply.json()["field"] == "status"
