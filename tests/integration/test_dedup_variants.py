"""A near duplicate that dedup skips keeps its wording as a variant of the memory it reuses
(``dedup.keep_variants``): searchable through that memory, never a memory of its own."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.core.domain.text import content_hash
from exocortex.proto.v1 import events_pb2
from exocortex.testing.rest import stored
from exocortex.testing.settings import ApplySettings

# Cosine ~0.9 with the bundled model: a duplicate. Only the second names the kitchen.
KETTLE = "The office kettle lives in the left cupboard above the sink."
KETTLE_AGAIN = "The office kettle is kept in the cupboard on the left, above the kitchen sink."
KETTLE_THIRD = "Our office kettle sits in the left-hand cupboard right above the sink, by the tea."


async def _variants(conn: psycopg.AsyncConnection[dict[str, Any]], memory_id: str) -> list[Any]:
    cur = await conn.execute(
        "SELECT content, content_hash, is_active, embedding IS NOT NULL AS has_vector, "
        "array(SELECT tag FROM memory_tags t WHERE t.memory_id = m.id ORDER BY tag) AS tags "
        "FROM memories m WHERE parent_id = %s AND chunk_index IS NULL ORDER BY created_at",
        (memory_id,),
    )
    return await cur.fetchall()


async def _search(api: httpx.AsyncClient, namespace: str, query: str) -> list[dict[str, Any]]:
    reply = await api.post("/api/memories/search", json={"query": query, "namespace": namespace})
    assert reply.status_code == 200, reply.text
    return list(reply.json()["results"])


async def _wait_for(check: Any) -> None:
    """Poll until ``check()`` holds: the index follows Postgres asynchronously."""
    deadline = asyncio.get_running_loop().time() + 10.0
    while asyncio.get_running_loop().time() < deadline:
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{check.__name__} did not hold within 10 s")


async def test_skipped_near_duplicate_is_kept_as_a_searchable_variant(
    api: httpx.AsyncClient, stack_db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert (settings["dedup.keep_variants"], settings["dedup.max_variants"]) == ("true", "20")
    first = await stored(api, content=KETTLE, namespace=namespace, tags=["office"])
    again = await stored(api, content=KETTLE_AGAIN, namespace=namespace, tags=["office", "kitchen"])
    assert again["dedup_action"] == "skipped"
    assert again["id"] == first["id"]
    assert again["content"] == KETTLE  # the memory itself is unchanged
    assert set(again["tags"]) == {"office", "kitchen"}

    [variant] = await _variants(stack_db, first["id"])
    assert variant["content"] == KETTLE_AGAIN
    assert variant["content_hash"] == content_hash(KETTLE_AGAIN)
    assert variant["is_active"]
    assert variant["has_vector"]
    assert variant["tags"] == ["kitchen", "office"]

    # The variant's own word finds the memory by keyword, and the memory appears once.
    async def kitchen_matches() -> bool:
        results = await _search(api, namespace, "kitchen")
        return bool(results) and results[0]["score_breakdown"]["keyword_rank"] is not None

    await _wait_for(kitchen_matches)
    results = await _search(api, namespace, "kitchen sink kettle")
    assert [r["memory"]["id"] for r in results] == [first["id"]]
    assert results[0]["memory"]["content"] == KETTLE

    # A variant is not a memory: not listed, not counted.
    recent = (await api.get("/api/memories/recent", params={"namespace": namespace})).json()
    assert [m["id"] for m in recent["results"]] == [first["id"]]
    assert recent["total"] == 1

    # A retried store keeps nothing twice; a further wording is kept too.
    await stored(api, content=KETTLE_AGAIN, namespace=namespace, tags=["office"])
    third = await stored(api, content=KETTLE_THIRD, namespace=namespace, tags=["office"])
    assert third["id"] == first["id"]
    contents = [v["content"] for v in await _variants(stack_db, first["id"])]
    assert contents == [KETTLE_AGAIN, KETTLE_THIRD]

    # Variants follow their memory: archived with it, and back with it.
    archived = await api.post(f"/api/memories/{first['id']}/archive")
    assert archived.status_code == 200, archived.text
    assert not any(v["is_active"] for v in await _variants(stack_db, first["id"]))

    async def gone() -> bool:
        return not await _search(api, namespace, "kitchen")

    await _wait_for(gone)
    restored = await api.post(f"/api/memories/{first['id']}/restore")
    assert restored.status_code == 200, restored.text
    assert all(v["is_active"] for v in await _variants(stack_db, first["id"]))


async def test_import_keeps_variants_and_the_setting_turns_them_off(
    api: httpx.AsyncClient,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
    namespace: str,
    change_settings: ApplySettings,
) -> None:
    first = await stored(api, content=KETTLE, namespace=namespace)
    reply = await api.post(
        "/api/memories/import",
        json={"memories": [{"content": KETTLE_AGAIN, "namespace": namespace}]},
    )
    assert reply.status_code == 200, reply.text
    [item] = reply.json()["results"]
    assert (item["id"], item["dedup_action"]) == (first["id"], "skipped")
    assert [v["content"] for v in await _variants(stack_db, first["id"])] == [KETTLE_AGAIN]

    await change_settings({"dedup.keep_variants": "false"})
    skipped = await stored(api, content=KETTLE_THIRD, namespace=namespace)
    assert skipped["dedup_action"] == "skipped"
    assert [v["content"] for v in await _variants(stack_db, first["id"])] == [KETTLE_AGAIN]


async def test_a_near_duplicate_that_contradicts_its_match_is_a_memory_of_its_own(
    api: httpx.AsyncClient, stack_db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> None:
    """A correction reads almost like what it corrects (cosine well above 0.85 here): folding
    it in as a variant would leave the old statement as the only memory anyone sees."""
    first = await stored(
        api, content="The build cache lives on the shared volume.", namespace=namespace
    )
    negated = await stored(
        api, content="The build cache does not live on the shared volume.", namespace=namespace
    )
    assert negated["dedup_action"] == "created"
    assert negated["id"] != first["id"]
    assert await _variants(stack_db, first["id"]) == []


async def test_a_changed_value_is_not_folded_into_the_old_value(
    api: httpx.AsyncClient, stack_db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> None:
    """Cosine 0.97 with the bundled model, so dedup alone would call it a duplicate; the
    detector reads a changed value, and the new value must be a memory someone can find."""
    old = await stored(
        api,
        content="The production API gateway request timeout is 30 seconds.",
        namespace=namespace,
    )
    new = await stored(
        api,
        content="The production API gateway request timeout is 60 seconds.",
        namespace=namespace,
    )
    assert new["dedup_action"] == "created"
    assert new["id"] != old["id"]
    assert await _variants(stack_db, old["id"]) == []


async def test_an_import_keeps_a_correction_apart_from_what_it_corrects(
    api: httpx.AsyncClient, stack_db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> None:
    first = await stored(
        api, content="The build cache lives on the shared volume.", namespace=namespace
    )
    reply = await api.post(
        "/api/memories/import",
        json={
            "memories": [
                {
                    "content": "The build cache does not live on the shared volume.",
                    "namespace": namespace,
                }
            ]
        },
    )
    assert reply.status_code == 200, reply.text
    [item] = reply.json()["results"]
    assert item["dedup_action"] == "created"
    assert item["id"] != first["id"]
    assert await _variants(stack_db, first["id"]) == []


async def test_an_import_folds_several_duplicates_of_a_memory_into_one_new_version(
    api: httpx.AsyncClient,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
    namespace: str,
    change_settings: ApplySettings,
) -> None:
    """Near duplicates of one memory in one import are folded together: the memory ends as
    folding them one after the other would leave it, at one new version announced by one
    event (so its projection is rebuilt once, not once per duplicate). One that finds no room
    among the variants is a memory of its own."""
    first = await stored(api, content=KETTLE, namespace=namespace, tags=["office"])
    reply = await api.post(
        "/api/memories/import",
        json={
            "memories": [
                {"content": KETTLE_AGAIN, "namespace": namespace, "tags": ["office", "kitchen"]},
                {
                    "content": KETTLE_THIRD,
                    "namespace": namespace,
                    "tags": ["office", "tea"],
                    "metadata": {"floor": 3},
                    "importance": 0.9,
                },
            ]
        },
    )
    assert reply.status_code == 200, reply.text
    assert [(r["id"], r["dedup_action"]) for r in reply.json()["results"]] == [
        (first["id"], "skipped"),
        (first["id"], "skipped"),
    ]
    memory = (await api.get(f"/api/memories/{first['id']}")).json()
    assert memory["version"] == first["version"] + 1
    assert sorted(memory["tags"]) == ["kitchen", "office", "tea"]
    assert memory["metadata"]["floor"] == 3
    assert memory["importance"] == 0.9
    variants = await _variants(stack_db, first["id"])
    assert [v["content"] for v in variants] == [KETTLE_AGAIN, KETTLE_THIRD]
    assert all(v["tags"] == ["kitchen", "office", "tea"] for v in variants)
    cur = await stack_db.execute("SELECT payload FROM outbox WHERE subject = 'exo.memory.updated'")
    updates = [
        event
        for event in (
            events_pb2.MemoryChanged.FromString(bytes(r["payload"])) for r in await cur.fetchall()
        )
        if event.memory_id == first["id"]
    ]
    assert len(updates) == 1
    assert sorted(updates[0].chunk_ids) == sorted(await _variant_ids(stack_db, first["id"]))

    await change_settings({"dedup.max_variants": "3"})
    fourth = "In the office, the kettle is in the left cupboard over the sink next to the mugs."
    fifth = "The kettle for the office: left cupboard, above the sink, top shelf."
    reply = await api.post(
        "/api/memories/import",
        json={"memories": [{"content": t, "namespace": namespace} for t in (fourth, fifth)]},
    )
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    # The first finds the last place among three variants; the second finds none left.
    assert (results[0]["id"], results[0]["dedup_action"]) == (first["id"], "skipped")
    assert results[1]["dedup_action"] == "created"
    assert results[1]["id"] != first["id"]
    assert len(await _variants(stack_db, first["id"])) == 3


async def _variant_ids(conn: psycopg.AsyncConnection[dict[str, Any]], memory_id: str) -> list[str]:
    cur = await conn.execute(
        "SELECT id FROM memories WHERE parent_id = %s AND chunk_index IS NULL", (memory_id,)
    )
    return [r["id"] for r in await cur.fetchall()]
