"""Behaviours the original API's clients rely on."""

from __future__ import annotations

import httpx


async def test_recent_clamps_limit_and_offset_like_the_original(
    api: httpx.AsyncClient, namespace: str
) -> None:
    for i in range(3):
        await api.post(
            "/api/memories", json={"content": f"recent item {i}", "namespace": namespace}
        )
    for params, expected in (
        ({"limit": "abc"}, 3),
        ({"limit": "-5"}, 1),
        ({"limit": "1000"}, 3),
        ({"limit": "2", "offset": "-1"}, 2),
    ):
        reply = await api.get("/api/memories/recent", params={"namespace": namespace, **params})
        assert reply.status_code == 200, reply.text
        assert reply.json()["count"] == expected, params


async def test_import_reports_bad_items_without_failing_the_rest(
    api: httpx.AsyncClient, namespace: str
) -> None:
    reply = await api.post(
        "/api/memories/import",
        json={
            "memories": [
                {"content": "Imported note about the staging database.", "namespace": namespace},
                {"content": "", "namespace": namespace},
                {"content": "<private>only secret</private>", "namespace": namespace},
            ]
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["imported"] == 1
    assert body["failed"] == 2
    assert len(body["errors"]) == 2
    # Read-your-writes: the imported memory is searchable when the reply arrives.
    assert body["indexed"] is True
    found = await api.post(
        "/api/memories/search", json={"query": "staging database", "namespace": namespace}
    )
    assert found.json()["count"] == 1
