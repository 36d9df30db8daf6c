"""The write path through the real stack: store, dedup, chunking, updates, removal, links."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import wait_enriched
from exocortex.testing.settings import ApplySettings

LONG_PARAGRAPH = (
    "The ingestion pipeline validates every request, strips private blocks and normalises "
    "tags before anything is stored. "
)


async def _store(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


async def _search(api: httpx.AsyncClient, namespace: str, query: str, **extra: Any) -> list[Any]:
    reply = await api.post(
        "/api/memories/search", json={"query": query, "namespace": namespace, **extra}
    )
    assert reply.status_code == 200, reply.text
    return list(reply.json()["results"])


def _rows(stack: Stack, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(stack.database_url) as conn:
        return conn.execute(sql, params).fetchall()


async def test_private_blocks_never_reach_storage_or_the_bus(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    secret = "hunter2-violet-octopus"
    memory = await _store(
        api,
        content=f"Deploy notes. <private>password {secret}</private> Use the blue button.",
        namespace=namespace,
    )
    assert secret not in memory["content"]
    stored = _rows(exo_stack, "SELECT content, keywords FROM memories WHERE id = %s", memory["id"])
    assert secret not in stored[0][0]
    assert secret not in stored[0][1]
    payloads = _rows(exo_stack, "SELECT payload FROM outbox")
    assert not any(secret.encode() in bytes(p[0]) for p in payloads)
    # The keyword index never saw the secret, so searching for it finds nothing by keyword.
    results = await _search(api, namespace, secret)
    assert all(r["score_breakdown"]["keyword_rank"] is None for r in results)
    assert all(secret not in r["memory"]["content"] for r in results)


async def test_semantic_duplicate_is_skipped_and_tags_merged(
    api: httpx.AsyncClient, namespace: str
) -> None:
    first = await _store(
        api,
        content="Our team decided to use PostgreSQL as the single source of truth for memories.",
        namespace=namespace,
        tags=["storage"],
    )
    again = await _store(
        api,
        content="The team decided to use PostgreSQL as the single source of truth "
        "for all memories.",
        namespace=namespace,
        tags=["storage", "db"],
    )
    assert again["dedup_action"] == "skipped"
    assert again["id"] == first["id"]
    assert again["superseded_id"] == first["id"]
    assert 0.85 <= again["dedup_similarity"] < 1.0
    assert "db" in again["tags"]


async def test_semantic_dedup_needs_a_shared_tag_and_enough_text(
    api: httpx.AsyncClient, namespace: str
) -> None:
    text = "Our team decided to use PostgreSQL as the single source of truth for memories."
    await _store(api, content=text, namespace=namespace, tags=["storage"])
    other_tag = await _store(api, content=text + " Really.", namespace=namespace, tags=["misc"])
    assert other_tag["dedup_action"] == "created"
    await _store(api, content="Short note on tea.", namespace=namespace)
    short = await _store(api, content="Short note on teas.", namespace=namespace)
    assert short["dedup_action"] == "created"


async def test_semantic_dedup_sees_old_memories_not_just_recent_ones(
    api: httpx.AsyncClient, namespace: str
) -> None:
    """The seed compared only the newest 200 rows; here the whole namespace is searched."""
    target = await _store(
        api,
        content="The kettle for the office kitchen lives in the left cupboard above the sink.",
        namespace=namespace,
    )
    filler = [
        {"content": f"Unrelated filler memory number {i} about topic {i * 7919 % 1000}."}
        for i in range(230)
    ]
    reply = await api.post(
        "/api/memories/import",
        json={"memories": [{**f, "namespace": namespace} for f in filler]},
    )
    assert reply.json()["imported"] == 230
    again = await _store(
        api,
        content="The office kitchen kettle lives in the left cupboard above the sink.",
        namespace=namespace,
    )
    assert again["dedup_action"] == "skipped"
    assert again["id"] == target["id"]


async def test_supersede_mode_inserts_and_retires_the_old_memory(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str, change_settings: ApplySettings
) -> None:
    await change_settings({"dedup.skip_insert_on_match": "false"})
    old = await _store(
        api,
        content="The staging cluster runs three nodes in the Frankfurt region for now.",
        namespace=namespace,
    )
    new = await _store(
        api,
        content="The staging cluster runs three nodes in the Frankfurt region at the moment.",
        namespace=namespace,
    )
    assert new["dedup_action"] == "superseded"
    assert new["id"] != old["id"]
    assert new["superseded_id"] == old["id"]
    before = (await api.get(f"/api/memories/{old['id']}")).json()
    assert before["is_active"] is False
    assert before["superseded_by"] == new["id"]
    ids = [r["memory"]["id"] for r in await _search(api, namespace, "staging cluster nodes")]
    assert ids == [new["id"]]


async def test_long_content_is_chunked_and_found_once(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    paragraphs = [f"Section {i}. " + LONG_PARAGRAPH * 3 for i in range(8)]
    paragraphs[5] = "The zebra crossing sensor firmware is flashed over serial at 115200 baud."
    content = "\n\n".join(paragraphs)
    memory = await _store(api, content=content, namespace=namespace)
    assert memory["content"] == content.strip()
    chunks = _rows(
        exo_stack,
        "SELECT content, embedding IS NOT NULL FROM memories WHERE parent_id = %s "
        "ORDER BY chunk_index",
        memory["id"],
    )
    assert len(chunks) >= 3
    assert all(has_vector for _, has_vector in chunks)
    assert all(len(text) <= 500 for text, _ in chunks)
    parent = _rows(exo_stack, "SELECT embedding FROM memories WHERE id = %s", memory["id"])
    assert parent[0][0] is None
    assert " ".join(" ".join(t.split()) for t, _ in chunks) == " ".join(content.split())
    for query in ("zebra crossing firmware baud rate", "private blocks and tag normalisation"):
        results = await _search(api, namespace, query)
        ids = [r["memory"]["id"] for r in results]
        assert ids.count(memory["id"]) == 1
        assert all(r["memory"]["parent_id"] is None for r in results)


async def test_auto_tags_keywords_and_metadata_memories(
    api: httpx.AsyncClient, namespace: str
) -> None:
    memory = await _store(
        api,
        content="We decided to move the job queue from Redis to NATS JetStream for durability.",
        namespace=namespace,
        tags=["infra"],
    )
    assert "infra" in memory["tags"]
    assert {"decision", "redis", "nats"} <= set(memory["tags"])
    assert len(memory["tags"]) <= 6
    assert "durability" in memory["keywords"]
    bench = await _store(
        api,
        content="Benchmark run 17: recall@10 0.93 for the job queue decision queries.",
        namespace=namespace,
        benchmark=True,
    )
    assert bench["is_metadata"] is True
    assert bench["importance"] == 0.15
    assert "benchmark-artifact" in bench["tags"]
    results = await _search(api, namespace, "job queue decision")
    assert results[0]["memory"]["id"] == memory["id"]


async def test_patch_content_rechunks_reembeds_and_replaces_in_search(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    content = "\n\n".join(f"Part {i}. " + LONG_PARAGRAPH * 3 for i in range(8))
    memory = await _store(api, content=content, namespace=namespace, tags=["pipeline"])
    old_chunks = {
        r[0] for r in _rows(exo_stack, "SELECT id FROM memories WHERE parent_id = %s", memory["id"])
    }
    assert old_chunks
    reply = await api.patch(
        f"/api/memories/{memory['id']}",
        json={
            "content": "Short now: the aurora telescope points north. <private>x</private>",
            "tags": ["Astronomy"],
            "metadata": {"reviewed": True},
        },
    )
    assert reply.status_code == 200, reply.text
    updated = reply.json()
    assert updated["version"] > memory["version"]
    assert updated["content"] == "Short now: the aurora telescope points north."
    assert updated["tags"] == ["astronomy"]
    assert updated["enrichment_status"] == "pending"
    assert updated["indexed"] is True
    remaining = _rows(exo_stack, "SELECT id FROM memories WHERE parent_id = %s", memory["id"])
    assert remaining == []
    parent = _rows(exo_stack, "SELECT embedding FROM memories WHERE id = %s", memory["id"])
    assert parent[0][0] is not None
    found = await _search(api, namespace, "aurora telescope")
    assert [r["memory"]["id"] for r in found] == [memory["id"]]
    stale = await _search(api, namespace, "ingestion pipeline validates private blocks")
    assert all("ingestion" not in r["memory"]["content"] for r in stale)
    meta = await api.patch(f"/api/memories/{memory['id']}", json={"metadata": {"reviewed": None}})
    assert meta.json()["metadata"] == {}


async def test_patch_validation_and_unknown_ids(api: httpx.AsyncClient, namespace: str) -> None:
    memory = await _store(api, content="Patch validation subject.", namespace=namespace)
    bad = await api.patch(f"/api/memories/{memory['id']}", json={"importance": 3})
    assert bad.status_code == 400
    assert bad.json()["field"] == "importance"
    empty = await api.patch(f"/api/memories/{memory['id']}", json={})
    assert empty.status_code == 400
    # Asking for what already is changes nothing (no new version) and is no error.
    settled = await wait_enriched(api, memory["id"])
    same = await api.patch(
        f"/api/memories/{memory['id']}", json={"content": memory["content"], "is_active": True}
    )
    assert same.status_code == 200, same.text
    assert same.json()["content"] == memory["content"]
    assert same.json()["version"] == settled["version"]
    private = await api.patch(
        f"/api/memories/{memory['id']}", json={"content": "<private>only</private>"}
    )
    assert private.status_code == 400
    assert private.json()["field"] == "content"
    missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    for method, path in (
        ("PATCH", f"/api/memories/{missing}"),
        ("DELETE", f"/api/memories/{missing}"),
        ("POST", f"/api/memories/{missing}/restore"),
    ):
        reply = await api.request(
            method, path, json={"importance": 0.2} if method == "PATCH" else None
        )
        assert reply.status_code == 404, (method, reply.text)


async def test_oversize_content_is_rejected_with_the_limit(api: httpx.AsyncClient) -> None:
    reply = await api.post("/api/memories", json={"content": "x" * 200_001})
    assert reply.status_code == 413
    assert "200000" in reply.json()["detail"]


async def test_archive_restore_and_versions(api: httpx.AsyncClient, namespace: str) -> None:
    memory = await _store(
        api, content="The archive test memory mentions a purple walrus.", namespace=namespace
    )
    archived = await api.patch(f"/api/memories/{memory['id']}", json={"is_active": False})
    assert archived.status_code == 200
    assert archived.json()["is_active"] is False
    assert await _search(api, namespace, "purple walrus") == []
    twice = await api.post(f"/api/memories/{memory['id']}/archive")
    assert twice.status_code == 409
    restored = await api.post(f"/api/memories/{memory['id']}/restore")
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert body["ok"] is True
    assert body["is_active"] is True
    assert body["version"] > archived.json()["version"]
    found = await _search(api, namespace, "purple walrus")
    assert [r["memory"]["id"] for r in found] == [memory["id"]]


async def test_restore_conflicts_with_an_active_duplicate(
    api: httpx.AsyncClient, namespace: str
) -> None:
    text = "Restore conflict check: the lighthouse lamp is replaced every spring."
    first = await _store(api, content=text, namespace=namespace)
    await api.post(f"/api/memories/{first['id']}/archive")
    second = await _store(api, content=text, namespace=namespace)
    assert second["id"] != first["id"]
    reply = await api.post(f"/api/memories/{first['id']}/restore")
    assert reply.status_code == 409
    assert reply.json()["field"] == "content"


async def test_delete_removes_chunks_links_and_index_entries_but_not_sources(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    content = "\n\n".join(f"Chapter {i} on glaciers. " + LONG_PARAGRAPH * 3 for i in range(8))
    memory = await _store(api, content=content, namespace=namespace)
    other = await _store(api, content="A consolidated source about glaciers.", namespace=namespace)
    link = await api.post(
        f"/api/memories/{memory['id']}/links",
        json={"target_id": other["id"], "link_type": "elaborates", "strength": 0.8},
    )
    assert link.status_code == 201
    with psycopg.connect(exo_stack.database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE memories SET consolidated_into = %s WHERE id = %s", (memory["id"], other["id"])
        )
    reply = await api.delete(f"/api/memories/{memory['id']}")
    assert reply.status_code == 200
    assert reply.json()["chunks_deleted"] >= 3
    assert (
        _rows(
            exo_stack,
            "SELECT 1 FROM memories WHERE id = %s OR parent_id = %s",
            memory["id"],
            memory["id"],
        )
        == []
    )
    assert _rows(exo_stack, "SELECT 1 FROM memory_links WHERE source_id = %s", memory["id"]) == []
    source = _rows(
        exo_stack, "SELECT is_active, consolidated_into FROM memories WHERE id = %s", other["id"]
    )
    assert source == [(True, None)]
    assert (await api.get(f"/api/memories/{memory['id']}")).status_code == 404
    for _ in range(50):
        if all(
            r["memory"]["id"] != memory["id"] for r in await _search(api, namespace, "glaciers")
        ):
            break
        await asyncio.sleep(0.1)
    results = await _search(api, namespace, "chapter on glaciers ingestion pipeline")
    assert all(r["memory"]["id"] != memory["id"] for r in results)
    indexed = _rows(exo_stack, "SELECT count(*) FROM memories WHERE namespace = %s", namespace)
    assert indexed == [(1,)]


async def test_links_create_overwrite_and_remove(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    a = await _store(api, content="Link source memory about otters.", namespace=namespace)
    b = await _store(api, content="Link target memory about rivers.", namespace=namespace)
    created = await api.post(f"/api/memories/{a['id']}/links", json={"target_id": b["id"]})
    assert created.status_code == 201
    assert created.json()["link_type"] == "related"
    assert created.json()["strength"] == 0.5
    again = await api.post(
        f"/api/memories/{a['id']}/links",
        json={"target_id": b["id"], "link_type": "supports", "strength": 0.9},
    )
    assert again.json()["link_type"] == "supports"
    assert _rows(
        exo_stack, "SELECT link_type, strength FROM memory_links WHERE source_id = %s", a["id"]
    ) == [("supports", 0.9)]
    for body, field in (
        ({"target_id": a["id"]}, "target_id"),
        ({"target_id": b["id"], "strength": 2}, "strength"),
        ({"target_id": b["id"], "link_type": "likes"}, "link_type"),
    ):
        bad = await api.post(f"/api/memories/{a['id']}/links", json=body)
        assert bad.status_code == 400, bad.text
        assert bad.json()["field"] == field
    missing = await api.post(
        f"/api/memories/{a['id']}/links", json={"target_id": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}
    )
    assert missing.status_code == 404
    assert missing.json()["field"] == "target_id"
    removed = await api.delete(f"/api/memories/{b['id']}/links/{a['id']}")
    assert removed.json() == {"ok": True, "deleted": True}
    assert _rows(exo_stack, "SELECT 1 FROM memory_links WHERE source_id = %s", a["id"]) == []


async def test_bulk_tag_and_bulk_update(api: httpx.AsyncClient, namespace: str) -> None:
    a = await _store(api, content="Bulk one about herons.", namespace=namespace, tags=["old"])
    b = await _store(api, content="Bulk two about egrets.", namespace=namespace, tags=["old"])
    missing = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    reply = await api.post(
        "/api/memories/bulk-tag",
        json={"ids": [a["id"], b["id"], missing], "add_tags": ["Birds"], "remove_tags": ["old"]},
    )
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"ok": True, "affected": 2, "missing_ids": [missing]}
    got = (await api.get(f"/api/memories/{a['id']}")).json()
    assert "birds" in got["tags"]
    assert "old" not in got["tags"]
    assert got["version"] > a["version"]
    # Bulk edits are not awaited: the projection (which filters by tag) catches up shortly.
    both = {a["id"], b["id"]}
    for _ in range(100):
        filtered = await _search(api, namespace, "herons", tags=["birds"])
        if {r["memory"]["id"] for r in filtered} == both:
            break
        await asyncio.sleep(0.1)
    assert {r["memory"]["id"] for r in filtered} == both
    for _ in range(100):
        if await _search(api, namespace, "herons", tags=["old"]) == []:
            break
        await asyncio.sleep(0.1)
    assert await _search(api, namespace, "herons", tags=["old"]) == []
    none = await api.post("/api/memories/bulk-tag", json={"ids": [a["id"]]})
    assert none.status_code == 400
    upd = await api.post(
        "/api/memories/bulk-update", json={"ids": [a["id"], b["id"]], "importance": 0.9}
    )
    assert upd.json()["affected"] == 2
    assert (await api.get(f"/api/memories/{b['id']}")).json()["importance"] == 0.9
    bad = await api.post("/api/memories/bulk-update", json={"ids": [a["id"]]})
    assert bad.status_code == 400
