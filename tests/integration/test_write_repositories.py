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


async def test_insert_missing_adds_many_at_once_as_one_at_a_time_would(db_pool: Pool) -> None:
    async with db_pool.connection() as conn:
        await bulk.insert_memories(conn, [_memory(f"n{i}", f"text {i}") for i in range(1, 6)])
        await links.upsert(conn, "n3", "n1", "supports", 0.9)  # a person's link
        added = await links.insert_missing(
            conn,
            [
                ("n1", "n2", "related", 0.7),
                ("n1", "n3", "related", 0.7),  # its reverse exists: left alone
                ("n1", "n4", "elaborates", 0.6),
                ("n4", "n1", "related", 0.5),  # the reverse of one given before it
                ("n1", "n2", "related", 0.4),  # given twice: the first is kept
                ("n1", "n5", "related", 0.3),
            ],
        )
        assert added == 3
        cur = await conn.execute(
            "SELECT source_id, target_id, link_type, strength FROM memory_links "
            "ORDER BY source_id, target_id"
        )
        assert [tuple(r.values()) for r in await cur.fetchall()] == [
            ("n1", "n2", "related", 0.7),
            ("n1", "n4", "elaborates", 0.6),
            ("n1", "n5", "related", 0.3),
            ("n3", "n1", "supports", 0.9),
        ]
        assert await links.insert_missing(conn, []) == 0


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
