"""Repository SQL of the write path on a fresh, migrated database."""

from __future__ import annotations

from exocortex.core.db.pool import Pool
from exocortex.core.repositories import bulk, links, memories
from exocortex.core.repositories.memories import NewMemory


def _memory(memory_id: str, text: str) -> NewMemory:
    return NewMemory(
        id=memory_id,
        namespace="default",
        content=text,
        content_type="text",
        source="api",
        importance=0.5,
        valence=0.0,
        content_hash=f"hash-{memory_id}",
        tags=["a", "b"],
    )


async def test_links_upsert_insert_missing_and_delete_both_ways(db_pool: Pool) -> None:
    async with db_pool.connection() as conn:
        await bulk.insert_memories(conn, [_memory("m1", "one"), _memory("m2", "two")])
        row = await links.upsert(conn, "m1", "m2", "related", 0.5)
        assert row["strength"] == 0.5
        row = await links.upsert(conn, "m1", "m2", "supports", 0.9)
        assert row["link_type"] == "supports"
        # Automation never adds the reverse of a link that exists, nor overwrites one.
        assert await links.insert_missing(conn, [("m2", "m1", "related", 0.8)]) == 0
        assert await links.insert_missing(conn, [("m1", "m2", "related", 0.8)]) == 0
        assert await links.delete(conn, "m2", "m1") == 1
        assert await links.delete(conn, "m2", "m1") == 0
        assert await links.insert_missing(conn, [("m2", "m1", "related", 0.8)]) == 1


async def test_bulk_insert_keeps_tags_and_enqueues_events(db_pool: Pool) -> None:
    async with db_pool.connection() as conn:
        await bulk.insert_memories(conn, [_memory("m1", "one"), _memory("m2", "two")])
        await bulk.enqueue_events(
            conn, [("exo.memory.stored", b"x", {}), ("exo.memory.stored", b"y", {})]
        )
        found = await memories.get_many(conn, ["m1", "m2"])
        assert found["m1"]["tags"] == ["a", "b"]
        assert found["m2"]["version"] == 1
        cur = await conn.execute("SELECT count(*) AS n FROM outbox WHERE published_at IS NULL")
        assert (await cur.fetchone())["n"] == 2  # type: ignore[index]
