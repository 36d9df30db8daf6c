"""The frequency boost's normaliser: the namespace's highest access count, read from Postgres."""

from __future__ import annotations

from typing import Any

import httpx
import psycopg

from exocortex.core.ids import new_id
from exocortex.retrieval.search import repository
from exocortex.testing.rest import store

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def _used(db: Conn, memory_id: str, count: int) -> None:
    await db.execute(
        "INSERT INTO memory_usage (memory_id, access_count, last_accessed_at) "
        "VALUES (%s, %s, now())",
        (memory_id, count),
    )


async def test_the_highest_access_count_of_active_memories_in_the_namespace(
    api: httpx.AsyncClient, namespace: str, stack_db: Conn
) -> None:
    assert await repository.max_access(stack_db, namespace) == 0  # nothing used yet

    used = await store(api, namespace, "Read often: the deploy checklist.")
    await _used(stack_db, used, 7)
    archived = await store(api, namespace, "Read more, but archived since.")
    await _used(stack_db, archived, 50)
    await stack_db.execute("UPDATE memories SET is_active = false WHERE id = %s", (archived,))
    chunk = new_id()  # chunks are ranked through their parent, never on their own
    await stack_db.execute(
        "INSERT INTO memories (id, namespace, content, parent_id, chunk_index) "
        "VALUES (%s, %s, 'chunk text', %s, 0)",
        (chunk, namespace, used),
    )
    await _used(stack_db, chunk, 40)
    elsewhere = await store(api, f"{namespace}-other", "Another namespace's favourite.")
    await _used(stack_db, elsewhere, 99)

    assert await repository.max_access(stack_db, namespace) == 7
    assert await repository.max_access(stack_db, f"{namespace}-other") == 99
