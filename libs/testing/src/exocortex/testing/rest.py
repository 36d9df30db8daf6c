"""Small REST helpers shared by the tests that drive the real stack through the gateway."""

from __future__ import annotations

import asyncio
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


# Everyday notes that share no subject with each other or with a test's own memories.
FILLERS = (
    "Ana repaired the bicycle in Lisbon.",
    "Ben painted the fence at the cabin.",
    "Chidi filed the insurance claim downtown.",
    "Dana tuned the piano at the office.",
    "Emil cleaned the gutters in the garden.",
    "Farah renewed the passport in Lisbon.",
    "Goran planted tomatoes at the cabin.",
    "Ana sorted the tax receipts downtown.",
    "Ben fixed the leaking tap at the office.",
    "Chidi booked the dentist for March.",
    "Dana returned the library books.",
    "Emil bought a new kettle for the kitchen.",
)


async def store_among_fillers(
    api: httpx.AsyncClient, namespace: str, content: str, **extra: Any
) -> str:
    """Store ``content`` between six unrelated notes before it and six after it (``FILLERS``):
    what the test stores before or after is then no arrival neighbour of it. Returns its id."""
    for text in FILLERS[:6]:
        await store(api, namespace, text)
    memory_id = await store(api, namespace, content, **extra)
    for text in FILLERS[6:]:
        await store(api, namespace, text)
    return memory_id


async def search(api: httpx.AsyncClient, namespace: str, query: str, **extra: Any) -> Any:
    reply = await api.post(
        "/api/memories/search", json={"query": query, "namespace": namespace, **extra}
    )
    assert reply.status_code == 200, reply.text
    return reply.json()


def result_ids(body: Any) -> list[str]:
    """The ids of a search reply's results, best first, compact or full."""
    return [r["memory"]["id"] if "memory" in r else r["id"] for r in body["results"]]


async def stored(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    """Store a memory from the given request fields and return the whole reply."""
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def wait_enriched(
    api: httpx.AsyncClient, memory_id: str, attempts: int = 600
) -> dict[str, Any]:
    """Poll until the enrichment worker has finished with the memory (bounded; its speed is
    measured in benchmarks, not here); return the memory as it then reads."""
    for _ in range(attempts):
        reply = await api.get(f"/api/memories/{memory_id}")
        # A 503 is a part of the stack still coming back (a test may just have restarted it).
        if reply.status_code != 503:
            assert reply.status_code == 200, reply.text
            if reply.json()["enrichment_status"] == "done":
                return dict(reply.json())
        await asyncio.sleep(0.1)
    raise AssertionError(f"memory {memory_id} was not enriched")


async def wait_all_enriched(api: httpx.AsyncClient, *memory_ids: str) -> None:
    """Wait for enrichment to finish with every memory. A test that then edits rows behind
    the stack's back (mentions, versions, timestamps) does not race enrichment's own write:
    enrichment replaces a memory's mentions and moves its version when it finishes."""
    for memory_id in memory_ids:
        await wait_enriched(api, memory_id)
