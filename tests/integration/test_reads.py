"""Reads on the real stack: memories by id and in lists, diff, links, stats, timeline, temporal
stats, hierarchy, ping, and the knowledge graph."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import psycopg
import pytest

from exocortex.core.ids import new_id
from exocortex.testing.rest import wait_enriched

Conn = psycopg.AsyncConnection[dict[str, Any]]


@pytest.fixture
def db(stack_db: Conn) -> Conn:
    return stack_db


async def store(api: httpx.AsyncClient, namespace: str, content: str, **extra: Any) -> str:
    reply = await api.post(
        "/api/memories", json={"content": content, "namespace": namespace, **extra}
    )
    assert reply.status_code == 201, reply.text
    memory_id: str = reply.json()["id"]
    return memory_id


async def backdate(db: Conn, memory_id: str, when: datetime) -> None:
    await db.execute(
        "UPDATE memories SET created_at = %s, updated_at = %s WHERE id = %s",
        (when, when, memory_id),
    )


async def test_get_keeps_shape_and_unknown_is_404(api: httpx.AsyncClient, namespace: str) -> None:
    memory_id = await store(
        api, namespace, "Reads come straight from the database.", tags=["Reads"]
    )
    got = await api.get(f"/api/memories/{memory_id}")
    assert got.status_code == 200
    assert got.json()["id"] == memory_id
    assert "reads" in got.json()["tags"]
    missing = await api.get("/api/memories/01NOTHEREATALL0000000000000")
    assert missing.status_code == 404
    assert missing.json()["field"] == "id"


async def test_recent_filters_archived_and_namespaces(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    old = await store(api, namespace, "An old design note about queues.", tags=["design"])
    new = await store(api, namespace, "A fresh decision about caches.", content_type="decision")
    gone = await store(api, namespace, "A note that will be archived.", importance=0.9)
    await backdate(db, old, datetime(2026, 1, 15, 23, 30, tzinfo=UTC))
    await db.execute(
        "UPDATE memories SET is_active = false, updated_at = now() WHERE id = %s", (gone,)
    )
    recent = (await api.get("/api/memories/recent", params={"namespace": namespace})).json()
    assert [m["id"] for m in recent["results"]] == [new, old]
    assert recent["total"] == 2
    by_tag = await api.get(
        "/api/memories/recent", params={"namespace": namespace, "tags": "design"}
    )
    assert [m["id"] for m in by_tag.json()["results"]] == [old]
    by_type = await api.get(
        "/api/memories/recent", params={"namespace": namespace, "content_type": "decision"}
    )
    assert [m["id"] for m in by_type.json()["results"]] == [new]
    # 23:30 UTC on Jan 15 is Jan 16 in Tokyo: a bare date is the caller's day.
    tokyo = await api.get(
        "/api/memories/recent",
        params={
            "namespace": namespace,
            "after": "2026-01-16",
            "before": "2026-01-16",
            "timezone": "Asia/Tokyo",
        },
    )
    assert [m["id"] for m in tokyo.json()["results"]] == [old]
    utc_day = await api.get(
        "/api/memories/recent",
        params={"namespace": namespace, "after": "2026-01-16", "before": "2026-01-16"},
    )
    assert utc_day.json()["results"] == []
    bad = await api.get("/api/memories/recent", params={"after": "soon"})
    assert bad.status_code == 400
    assert bad.json()["field"] == "after"

    archived = (await api.get("/api/memories/archived", params={"namespace": namespace})).json()
    assert [m["id"] for m in archived["results"]] == [gone]
    names = (await api.get("/api/memories/namespaces")).json()["namespaces"]
    assert namespace in names


async def test_diff_since(api: httpx.AsyncClient, namespace: str, db: Conn) -> None:
    before = datetime.now(UTC) - timedelta(days=2)
    kept = await store(api, namespace, "Existing memory that gets edited.")
    archived = await store(api, namespace, "Existing memory that gets archived.")
    for memory_id in (kept, archived):
        await backdate(db, memory_id, before - timedelta(days=1))
    await db.execute("UPDATE memories SET updated_at = now() WHERE id = %s", (kept,))
    await db.execute(
        "UPDATE memories SET is_active = false, updated_at = now() WHERE id = %s", (archived,)
    )
    created = await store(api, namespace, "A memory created after the cut-off.")
    diff = await api.get(
        "/api/memories/diff", params={"since": before.isoformat(), "namespace": namespace}
    )
    assert diff.status_code == 200, diff.text
    body = diff.json()
    assert [m["id"] for m in body["created"]] == [created]
    assert [m["id"] for m in body["updated"]] == [kept]
    assert [m["id"] for m in body["archived"]] == [archived]
    assert body["counts"] == {"created": 1, "updated": 1, "archived": 1}
    missing = await api.get("/api/memories/diff")
    assert missing.status_code == 400
    assert missing.json()["field"] == "since"


async def test_links_both_directions(api: httpx.AsyncClient, namespace: str, db: Conn) -> None:
    a = await store(api, namespace, "Memory A about the queue design.")
    b = await store(api, namespace, "The cat sleeps on the warm windowsill.")
    c = await store(api, namespace, "Tax forms are due at the end of April.")
    # Enrichment may link memories on its own; these two links are set here explicitly.
    await db.execute(
        "DELETE FROM memory_links WHERE source_id = ANY(%(ids)s) OR target_id = ANY(%(ids)s)",
        {"ids": [a, b, c]},
    )
    await db.execute(
        "INSERT INTO memory_links (source_id, target_id, link_type, strength) VALUES "
        "(%s, %s, 'elaborates', 0.8), (%s, %s, 'supports', 0.4)",
        (a, b, c, a),
    )
    links = (await api.get(f"/api/memories/{a}/links")).json()
    assert links["count"] == 2
    first, second = links["links"]
    assert (first["memory_id"], first["direction"], first["link_type"]) == (
        b,
        "outgoing",
        "elaborates",
    )
    assert (second["memory_id"], second["direction"]) == (c, "incoming")
    assert second["preview"]["id"] == c
    assert (await api.get("/api/memories/01NOTHEREATALL0000000000000/links")).status_code == 404


async def test_stats_count_memories_not_chunks(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    parent = await store(api, namespace, "A parent memory.", content_type="note")
    await store(api, namespace, "A second memory.")
    archived = await store(api, namespace, "An archived memory.")
    await db.execute("UPDATE memories SET is_active = false WHERE id = %s", (archived,))
    await db.execute(
        "INSERT INTO memories (id, namespace, content, parent_id, chunk_index) "
        "VALUES (%s, %s, 'chunk text', %s, 0)",
        (new_id(), namespace, parent),
    )
    stats = (await api.get("/api/stats", params={"namespace": namespace})).json()
    assert stats["active_memories"] == 2
    assert stats["archived_memories"] == 1
    assert stats["total_memories"] == 3
    assert stats["chunks"] == 1
    assert stats["by_content_type"] == {"note": 1, "text": 1}
    assert stats["by_source"] == {"api": 2}
    ping = (await api.get("/api/ping", params={"namespace": namespace})).json()
    assert ping["status"] == "ok"
    assert ping["active"] == 2


async def test_timeline_temporal_stats_and_hierarchy(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    days = [today - timedelta(days=d) for d in (0, 1, 2, 5)]
    ids = []
    for i, when in enumerate(days):
        memory_id = await store(api, namespace, f"Daily log entry number {i} about the garden.")
        await backdate(db, memory_id, when)
        ids.append(memory_id)
    timeline = await api.get("/api/timeline", params={"namespace": namespace, "timezone": "UTC"})
    assert timeline.status_code == 200, timeline.text
    entries = timeline.json()
    assert [e["date"] for e in entries] == [d.date().isoformat() for d in days]
    assert entries[0]["count"] == 1
    assert entries[0]["memories"][0]["id"] == ids[0]

    stats = (
        await api.get("/api/temporal-stats", params={"namespace": namespace, "timezone": "UTC"})
    ).json()
    assert stats["total_days"] == 4
    assert stats["streak_current"] == 3
    assert stats["streak_longest"] == 3
    assert stats["most_active_count"] == 1

    epoch = await store(api, namespace, "Epoch: the garden season.", tags=["epoch"])
    theme = await store(api, namespace, "Narrative: the week of planting.", tags=["narrative"])
    for memory_id in (epoch, theme):
        await backdate(db, memory_id, today + timedelta(minutes=5))
    tree = (await api.get("/api/hierarchy", params={"namespace": namespace})).json()
    assert [e["id"] for e in tree["epochs"]] == [epoch]
    themes = tree["epochs"][0]["themes"]
    assert [t["id"] for t in themes] == [theme]
    # Episodes: the week before the theme, excluding epochs and narratives.
    assert {e["id"] for e in themes[0]["episodes"]} == set(ids)

    decisions = await store(api, namespace, "We decided to grow tomatoes.", tags=["decision"])
    timeline = await api.get("/api/timeline", params={"namespace": namespace, "mode": "decisions"})
    assert [d["id"] for d in timeline.json()["decisions"]] == [decisions]
    bad = await api.get("/api/temporal-stats", params={"timezone": "Nowhere/Land"})
    assert bad.status_code == 400
    assert bad.json()["field"] == "timezone"


async def test_entities_graph_and_analysis(
    api: httpx.AsyncClient, namespace: str, db: Conn
) -> None:
    async def entity(name: str, kind: str, tags: list[str] | None = None) -> str:
        reply = await api.post(
            "/api/entities",
            json={"name": name, "type": kind, "namespace": namespace, "tags": tags or []},
        )
        assert reply.status_code == 201, reply.text
        entity_id: str = reply.json()["id"]
        return entity_id

    ada = await entity("Ada", "person", ["team"])
    pg = await entity("Postgres", "technology")
    nats = await entity("NATS", "technology")
    bob = await entity("Bob", "person", ["team"])
    eve = await entity("Eve", "person")
    # No names in the text, so extraction cannot add mentions of its own.
    m1 = await store(api, namespace, "Autovacuum was tuned last week.")
    m2 = await store(api, namespace, "Backups run nightly.")
    for memory_id in (m1, m2):  # enrichment replaces a memory's mentions when it finishes
        await wait_enriched(api, memory_id)
    await db.execute(
        "INSERT INTO memory_entities (memory_id, entity_id, relevance) VALUES "
        "(%s, %s, 0.9), (%s, %s, 0.6)",
        (m1, pg, m2, pg),
    )
    # Two groups joined by one bridge: Ada–Postgres–NATS and Bob–Eve, Ada–Bob.
    for source, target, rel in (
        (ada, pg, "uses"),
        (pg, nats, "co_occurs"),
        (nats, ada, "co_occurs"),
        (bob, eve, "works_with"),
        (ada, bob, "works_with"),
    ):
        await db.execute(
            "INSERT INTO entity_relationships (id, source_entity_id, target_entity_id, "
            "relationship, context) VALUES (%s, %s, %s, %s, 'at work')",
            (new_id(), source, target, rel),
        )

    listed = (await api.get("/api/entities", params={"namespace": namespace})).json()
    assert [e["name"] for e in listed["results"]] == ["Ada", "Bob", "Eve", "NATS", "Postgres"]
    people = await api.get("/api/entities", params={"namespace": namespace, "type": "person"})
    assert people.json()["count"] == 3
    team = await api.get("/api/entities", params={"namespace": namespace, "tags": "team"})
    assert {e["name"] for e in team.json()["results"]} == {"Ada", "Bob"}
    like = await api.get("/api/entities", params={"namespace": namespace, "query": "post"})
    assert [e["name"] for e in like.json()["results"]] == ["Postgres"]
    assert (
        "team"
        in (await api.get("/api/entities/tags", params={"namespace": namespace})).json()["tags"]
    )

    one = (await api.get(f"/api/entities/{pg}")).json()
    assert one["memory_count"] == 2
    mems = (await api.get(f"/api/entities/{pg}/memories")).json()
    assert [m["id"] for m in mems["memories"]] == [m1, m2]
    assert mems["memories"][0]["relevance"] == 0.9
    rels = (await api.get(f"/api/entities/{ada}/relationships")).json()
    assert rels["count"] == 3
    assert {(r["entity"]["name"], r["direction"]) for r in rels["results"]} == {
        ("Postgres", "outgoing"),
        ("NATS", "incoming"),
        ("Bob", "outgoing"),
    }
    assert (await api.get("/api/entities/01NOTHEREATALL0000000000000")).status_code == 404

    graph = (await api.get("/api/entities/graph", params={"namespace": namespace})).json()
    assert len(graph["entities"]) == 5
    assert len(graph["relationships"]) == 5
    analysis = await api.get("/api/entities/graph/analysis", params={"namespace": namespace})
    assert analysis.status_code == 200, analysis.text
    body = analysis.json()
    assert body["stats"]["nodes"] == 5
    assert body["stats"]["edges"] == 5
    assert body["stats"]["components"] == 1
    # Ada sits on every path between the two groups.
    assert body["centrality"][0]["name"] == "Ada"
    assert body["bridges"][0]["name"] == "Ada"
    groups = sorted(sorted(m["name"] for m in c["members"]) for c in body["communities"])
    assert groups == [["Ada", "NATS", "Postgres"], ["Bob", "Eve"]]
    again = await api.get("/api/entities/graph/analysis", params={"namespace": namespace})
    assert again.json()["communities"] == body["communities"]  # deterministic
