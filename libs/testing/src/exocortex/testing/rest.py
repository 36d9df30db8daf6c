"""Small REST helpers shared by the tests that drive the real stack through the gateway."""

from __future__ import annotations

from typing import Any

import httpx


async def store(api: httpx.AsyncClient, namespace: str, content: str, **extra: Any) -> str:
    """Store a memory, insist it is searchable already (read-your-writes), return its id."""
    reply = await api.post(
        "/api/memories", json={"content": content, "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    assert reply.json()["indexed"] is True
    memory_id: str = reply.json()["id"]
    return memory_id


async def search(api: httpx.AsyncClient, namespace: str, query: str, **extra: Any) -> Any:
    reply = await api.post(
        "/api/memories/search", json={"query": query, "namespace": namespace, **extra}
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


async def stored(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    """Store a memory from the given request fields and return the whole reply."""
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())
