"""Writes racing each other on one memory, on the real stack: an edit sent right after the store
(while enrichment reads and writes the same row) and several edits of different fields at once.
Nothing acknowledged may be lost: every edited field, every metadata key, the tags of the
memory and of its chunks, and a version for every write."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import wait_enriched

ROUNDS = 60
WAVE = 6  # rounds in flight at once
CONCURRENT_ROUNDS = 12

TOPICS = (
    "the greenhouse irrigation valve",
    "Ada Lovelace reviewing the compiler backend at Acme Labs",
    "a sourdough starter fed twice a day",
    "the Postgres replica lag during the nightly backup",
    "tide tables for the harbour in March",
    "the NATS consumer redelivering after a crash",
)


def _rows(stack: Stack, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(stack.database_url) as conn:
        return conn.execute(sql, params).fetchall()


async def _store(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def _patch(api: httpx.AsyncClient, memory_id: str, **body: Any) -> dict[str, Any]:
    reply = await api.patch(f"/api/memories/{memory_id}", json=body)
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def _long_text(round_no: int) -> str:
    """Long enough to be chunked (over ``chunking.max_length``)."""
    return "\n\n".join(
        f"Section {n} of round {round_no}: notes on {topic}. " * 6 for n, topic in enumerate(TOPICS)
    ).strip()  # stored text is trimmed


async def _store_then_edit(api: httpx.AsyncClient, namespace: str, i: int) -> dict[str, Any]:
    """Store, then edit at once (enrichment of the stored text is usually still running)."""
    topic = TOPICS[i % len(TOPICS)]
    stored = await _store(
        api,
        content=f"Round {i}: first notes on {topic}.",
        namespace=f"{namespace}-{i}",  # one namespace per round: no dedup between rounds
        tags=["draft"],
        metadata={"origin": "store"},
        importance=0.3,
    )
    edit: dict[str, Any] = {
        "tags": ["edited", f"round-{i}"],
        "metadata": {"edit": i},
        "importance": 0.85,
    }
    if i % 2 == 0:
        edit["content"] = f"Round {i}: revised notes on {topic}, checked twice."
    patched = await _patch(api, stored["id"], **edit)
    return {"stored": stored, "patched": patched, "edit": edit}


async def test_an_edit_right_after_a_store_survives_enrichment(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    rounds: list[dict[str, Any]] = []
    for start in range(0, ROUNDS, WAVE):
        rounds += await asyncio.gather(
            *(_store_then_edit(api, namespace, i) for i in range(start, start + WAVE))
        )
    for i, r in enumerate(rounds):
        stored, patched, edit = r["stored"], r["patched"], r["edit"]
        final = await wait_enriched(api, stored["id"])
        expected_content = edit.get("content", stored["content"])
        assert final["content"] == expected_content, f"round {i}: content lost"
        assert sorted(final["tags"]) == ["edited", f"round-{i}"], f"round {i}: {final['tags']}"
        assert final["metadata"] == {"origin": "store", "edit": i}, f"round {i}"
        assert final["importance"] == 0.85, f"round {i}"
        # The store and the edit each made a version (enrichment makes one only when it
        # changes the keywords, which the write path already computed as it would).
        assert patched["version"] > stored["version"]
        assert final["version"] >= patched["version"], f"round {i}"
    enriched = _rows(
        exo_stack,
        "SELECT count(*) FROM memories WHERE id = ANY(%s) AND enrichment_status = 'done'",
        [r["stored"]["id"] for r in rounds],
    )
    assert enriched[0][0] == ROUNDS
    # A new text was enriched after it was written: enrichment's last run came after the
    # memory's last change.
    edited = [r["stored"]["id"] for r in rounds if "content" in r["edit"]]
    after = _rows(
        exo_stack,
        "SELECT id FROM memories WHERE id = ANY(%s) AND enriched_at >= updated_at",
        edited,
    )
    assert sorted(row[0] for row in after) == sorted(edited)


async def _edit_all_at_once(api: httpx.AsyncClient, memory_id: str, i: int) -> list[int]:
    replies = await asyncio.gather(
        _patch(api, memory_id, content=_long_text(i)),
        _patch(api, memory_id, tags=["reviewed", f"batch-{i}"]),
        _patch(api, memory_id, metadata={"first": i}),
        _patch(api, memory_id, metadata={"second": i}),
        _patch(api, memory_id, importance=0.77),
        _patch(api, memory_id, valence=-0.4),
    )
    return [int(r["version"]) for r in replies]


async def test_concurrent_edits_of_different_fields_all_land(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    for i in range(CONCURRENT_ROUNDS):
        stored = await _store(
            api,
            content=f"Concurrent round {i}: short notes on {TOPICS[i % len(TOPICS)]}.",
            namespace=f"{namespace}-c{i}",
            tags=["draft"],
            metadata={"origin": "store"},
        )
        versions = await _edit_all_at_once(api, stored["id"], i)
        assert len(set(versions)) == len(versions), f"round {i}: two edits share a version"
        final = await wait_enriched(api, stored["id"])
        assert final["content"] == _long_text(i), f"round {i}: content lost"
        assert sorted(final["tags"]) == [f"batch-{i}", "reviewed"], f"round {i}"
        assert final["metadata"] == {"origin": "store", "first": i, "second": i}, f"round {i}"
        assert final["importance"] == 0.77, f"round {i}"
        assert final["valence"] == -0.4, f"round {i}"
        assert final["version"] >= stored["version"] + len(versions), f"round {i}"
        # Chunks follow their parent: same tags, importance and valence, whichever edit won.
        chunks = _rows(
            exo_stack,
            "SELECT c.importance, c.valence, "
            "ARRAY(SELECT t.tag FROM memory_tags t WHERE t.memory_id = c.id ORDER BY t.tag) "
            "FROM memories c WHERE c.parent_id = %s AND c.chunk_index IS NOT NULL",
            stored["id"],
        )
        assert chunks, f"round {i}: the long text was not chunked"
        for importance, valence, tags in chunks:
            assert (importance, valence) == (0.77, -0.4), f"round {i}: stale chunk columns"
            assert tags == [f"batch-{i}", "reviewed"], f"round {i}: stale chunk tags {tags}"
