"""The project snapshot on the real stack: one retrieval read behind GET /api/snapshot."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.testing.rest import store

Conn = psycopg.AsyncConnection[dict[str, Any]]

ACCESS_COUNT = (
    "SELECT coalesce((SELECT access_count FROM memory_usage WHERE memory_id = %s), 0)"
    " AS access_count"
)


@pytest.fixture
def db(stack_db: Conn) -> Conn:
    return stack_db


async def goal(api: httpx.AsyncClient, namespace: str, title: str, **extra: Any) -> str:
    reply = await api.post("/api/goals", json={"title": title, "namespace": namespace, **extra})
    assert reply.status_code == 201, reply.text
    goal_id: str = reply.json()["id"]
    return goal_id


async def backdate(api: httpx.AsyncClient, db: Conn, memory_id: str, days: int) -> None:
    """Move a memory's creation into the past, then re-project it (a PATCH waits for that)."""
    when = datetime.now(UTC) - timedelta(days=days)
    await db.execute("UPDATE memories SET created_at = %s WHERE id = %s", (when, memory_id))
    reply = await api.patch(f"/api/memories/{memory_id}", json={"importance": 0.6})
    assert reply.status_code == 200, reply.text
    assert reply.json()["indexed"] is True


def ids(section: list[dict[str, Any]]) -> set[str]:
    return {r["id"] for r in section}


async def test_every_section_of_a_project_snapshot(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    decision = await store(
        api, namespace, "Quillmark decision: render pages on the server.", tags=["decision"]
    )
    todo = await store(api, namespace, "Quillmark todo: add a print stylesheet.", tags=["todo"])
    plan = await store(api, namespace, "Quillmark plan: ship the editor in May.", tags=["plan"])
    technique = await store(
        api, namespace, "Quillmark technique: diff documents by paragraph.", tags=["technique"]
    )
    old = await store(
        api, namespace, "Quillmark decision: the first prototype used SQLite.", tags=["decision"]
    )
    await backdate(api, db, old, days=40)
    active = await goal(api, namespace, "Release Quillmark 1.0", priority="high")
    milestone = await api.post(f"/api/goals/{active}/milestones", json={"title": "Beta"})
    assert milestone.status_code == 201, milestone.text
    await goal(api, namespace, "Retire the old site", status="completed")

    reply = await api.get("/api/snapshot", params={"project": "Quillmark", "namespace": namespace})
    assert reply.status_code == 200, reply.text
    snap = reply.json()
    assert snap["project"] == "Quillmark"
    assert snap["namespace"] == namespace
    assert snap["days"] == 14
    since = datetime.fromisoformat(snap["since"])
    assert abs(since - (datetime.now(UTC) - timedelta(days=14))) < timedelta(minutes=1)
    assert snap["degraded"] == []

    # Recent: everything of the last 14 days, not the memory from 40 days ago.
    assert ids(snap["recent"]) == {decision, todo, plan, technique}
    assert ids(snap["decisions"]) == {decision, old}
    assert ids(snap["open_threads"]) == {todo, plan}
    assert ids(snap["techniques"]) == {technique}
    first = snap["decisions"][0]
    assert set(first) == {"id", "preview", "score", "tags", "created_at"}
    assert "quillmark" in first["preview"].lower()

    assert [g["id"] for g in snap["goals"]] == [active]
    assert [m["title"] for m in snap["goals"][0]["milestones"]] == ["Beta"]
    assert snap["goals"][0]["priority"] == "high"

    # The snapshot only peeks: its searches are served (impressions) but count no access.
    deadline = asyncio.get_running_loop().time() + 15.0
    while asyncio.get_running_loop().time() < deadline:
        row = await (
            await db.execute(
                "SELECT count(*) AS n FROM search_impressions WHERE memory_id = %s", (technique,)
            )
        ).fetchone()
        if row == {"n": 1}:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the snapshot's searches were never recorded")
    row = await (await db.execute(ACCESS_COUNT, (technique,))).fetchone()
    assert row == {"access_count": 0}


async def test_section_limits_and_window(api: httpx.AsyncClient, namespace: str) -> None:
    for n in range(3):
        await store(api, namespace, f"Orrery decision {n}: keep the API small.", tags=["decision"])
    await goal(api, namespace, "Orrery goal A")
    await goal(api, namespace, "Orrery goal B")
    reply = await api.get(
        "/api/snapshot",
        params={
            "project": "Orrery",
            "namespace": namespace,
            "days": 3,
            "recent_limit": 1,
            "decisions_limit": 2,
            "goals_limit": 1,
        },
    )
    assert reply.status_code == 200, reply.text
    snap = reply.json()
    assert snap["days"] == 3
    assert len(snap["recent"]) == 1
    assert len(snap["decisions"]) == 2
    assert len(snap["goals"]) == 1
    assert snap["open_threads"] == []
    assert snap["techniques"] == []
    other = await api.get(
        "/api/snapshot", params={"project": "Orrery", "namespace": f"{namespace}-x"}
    )
    assert other.status_code == 200
    assert other.json()["recent"] == []
    assert other.json()["goals"] == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "project"),
        ({"project": ""}, "project"),
        ({"project": "   "}, "project"),
        ({"project": "x\x00y"}, "project"),
        ({"project": "x", "namespace": "a\x00b"}, "namespace"),
        ({"project": "x", "days": 0}, "days"),
        ({"project": "x", "decisions_limit": 51}, "decisions_limit"),
    ],
)
async def test_bad_requests_name_the_field(
    api: httpx.AsyncClient, namespace: str, params: dict[str, Any], field: str
) -> None:
    reply = await api.get("/api/snapshot", params={"namespace": namespace} | params)
    assert reply.status_code == 400, reply.text
    assert reply.headers["content-type"].startswith("application/problem+json")
    assert reply.json()["field"] == field
