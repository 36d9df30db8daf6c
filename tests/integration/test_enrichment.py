"""The enrichment worker on the real stack: entities, relationships, related links,
contradiction candidates and goal links, done asynchronously after a store."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import httpx
import psycopg

from exocortex.core.bus import subjects
from exocortex.core.db.outbox import NOTIFY_CHANNEL
from exocortex.core.ids import new_id
from exocortex.core.runtime.stack import Stack
from exocortex.proto.v1 import events_pb2
from exocortex.testing.rest import wait_enriched
from exocortex.testing.wait import until_async


async def _store(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    return dict(reply.json())


def _rows(stack: Stack, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(stack.database_url) as conn:
        return conn.execute(sql, params).fetchall()


async def test_entities_and_relationships_with_context(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    memory = await _store(
        api,
        content="Exocortex uses NATS for real-time event streaming. The Exocortex project "
        "was started by Ada Lovelace at Acme Labs.",
        namespace=namespace,
    )
    assert memory["enrichment_status"] == "pending"
    # The write path names the text's entities in the keywords as enrichment would, so they
    # are searchable on return, and enrichment, with nothing to change there, keeps the version.
    assert "nats" in memory["keywords"]
    done = await wait_enriched(api, memory["id"])
    assert done["version"] == memory["version"]
    assert done["keywords"] == memory["keywords"]
    entities = dict(
        _rows(
            exo_stack,
            "SELECT e.name, e.type FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
            "WHERE me.memory_id = %s",
            memory["id"],
        )
    )
    assert entities["NATS"] == "technology"
    assert entities["Ada Lovelace"] == "person"
    assert entities["Acme Labs"] == "organization"
    assert entities["Exocortex"] == "project"
    rels = _rows(
        exo_stack,
        "SELECT s.name, r.relationship, t.name, r.context FROM entity_relationships r "
        "JOIN entities s ON s.id = r.source_entity_id JOIN entities t ON t.id = r.target_entity_id "
        "WHERE r.memory_id = %s",
        memory["id"],
    )
    assert ("Exocortex", "uses", "NATS", "for real-time event streaming") in rels
    assert "nats" in done["keywords"]


async def test_related_links_and_contradiction_candidates(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    first = await _store(
        api,
        content="The API request timeout of the billing gateway is 30 seconds.",
        namespace=namespace,
        tags=["billing"],
    )
    await wait_enriched(api, first["id"])
    await _store(api, content="Sourdough needs a long cold proof overnight.", namespace=namespace)
    second = await _store(
        api,
        content="The API request timeout of the billing gateway is 90 seconds.",
        namespace=namespace,
        tags=["config"],
    )
    assert second["dedup_action"] == "created"  # no shared tag, so not a duplicate
    await wait_enriched(api, second["id"])
    links = _rows(
        exo_stack,
        "SELECT target_id, link_type, strength FROM memory_links WHERE source_id = %s",
        second["id"],
    )
    assert [(t, kind) for t, kind, _ in links] == [(first["id"], "related")]
    assert links[0][2] >= 0.75
    contradictions = _rows(
        exo_stack,
        "SELECT memory_a_id, memory_b_id, kind, status FROM contradictions "
        "WHERE memory_a_id = %s OR memory_b_id = %s",
        second["id"],
        second["id"],
    )
    assert contradictions == [(second["id"], first["id"], "value_change", "pending")]


async def test_goal_links_without_demoting_tags(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    goal_id = new_id()  # as the store makes them (a restore of the whole store checks ids)
    with psycopg.connect(exo_stack.database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO goals (id, namespace, title, description) VALUES (%s, %s, %s, %s)",
            (goal_id, namespace, "Cut cloud hosting costs", "Reduce the monthly AWS bill"),
        )
    memory = await _store(
        api,
        content="Moving the batch jobs to spot instances cut our monthly AWS hosting bill by 40%.",
        namespace=namespace,
    )
    done = await wait_enriched(api, memory["id"])
    links = _rows(
        exo_stack, "SELECT goal_id, kind FROM goal_links WHERE memory_id = %s", memory["id"]
    )
    assert links == [(goal_id, "implicit")]
    assert done["is_metadata"] is False
    assert not any(t.startswith("goal-progress") for t in done["tags"])
    unrelated = await _store(
        api, content="The cat sleeps on the warm windowsill.", namespace=namespace
    )
    await wait_enriched(api, unrelated["id"])
    assert _rows(exo_stack, "SELECT 1 FROM goal_links WHERE memory_id = %s", unrelated["id"]) == []


async def test_content_update_is_enriched_again(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    memory = await _store(api, content="Our stack uses Redis for caching.", namespace=namespace)
    await wait_enriched(api, memory["id"])
    reply = await api.patch(
        f"/api/memories/{memory['id']}", json={"content": "Our stack uses Memcached and Kafka."}
    )
    assert reply.json()["enrichment_status"] == "pending"
    await wait_enriched(api, memory["id"])
    names = {
        r[0]
        for r in _rows(
            exo_stack,
            "SELECT e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
            "WHERE me.memory_id = %s",
            memory["id"],
        )
    }
    assert "Kafka" in names
    assert "Redis" not in names


async def test_keywords_enrichment_changes_get_a_new_version_and_one_event(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    """A memory whose keywords lack its entities (stored before the write path named them, or
    under another confidence setting) gets them from enrichment at a new version, with one
    ``enriched`` event for the keyword index to apply."""
    memory = await _store(
        api, content="The billing team moved its queue onto RabbitMQ last spring.",
        namespace=namespace,
    )  # fmt: skip
    await wait_enriched(api, memory["id"])
    # Taken back to how an older write path left it: keywords without entity names, pending,
    # at a new version announced by an ``updated`` event (the indexes apply it, then enrichment).
    with psycopg.connect(exo_stack.database_url) as conn:
        first_outbox = conn.execute("SELECT coalesce(max(id), 0) FROM outbox").fetchone()[0]  # type: ignore[index]
        (version,) = conn.execute(
            "UPDATE memories SET keywords = 'billing team', enrichment_status = 'pending', "
            "version = version + 1, updated_at = now() WHERE id = %s RETURNING version",
            (memory["id"],),
        ).fetchone()  # type: ignore[misc]
        event = events_pb2.MemoryChanged(
            memory_id=memory["id"], version=version, namespace=namespace, change="updated"
        )
        conn.execute(
            "INSERT INTO outbox (subject, payload, headers) VALUES (%s, %s, '{}')",
            (subjects.MEMORY_UPDATED, event.SerializeToString()),
        )
        conn.execute("SELECT pg_notify(%s, '')", (NOTIFY_CHANNEL,))

    done = await wait_enriched(api, memory["id"])
    assert done["version"] == version + 1
    assert "rabbitmq" in done["keywords"]
    published = _rows(
        exo_stack,
        "SELECT subject FROM outbox WHERE id > %s AND subject = %s",
        first_outbox,
        subjects.MEMORY_ENRICHED,
    )
    assert len(published) == 1


def _age(stack: Stack, memory_id: str, created_at: str) -> None:
    """Move a memory back in time (``created_at`` is set by the server on store)."""
    with psycopg.connect(stack.database_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE memories SET created_at = " + created_at + " WHERE id = %s", (memory_id,)
        )


def _elaborates(stack: Stack, source_id: str) -> dict[str, float]:
    return {
        str(target): float(strength)
        for target, strength in _rows(
            stack,
            "SELECT target_id, strength FROM memory_links "
            "WHERE source_id = %s AND link_type = 'elaborates'",
            source_id,
        )
    }


async def _episode(api: httpx.AsyncClient, namespace: str, text: str, **extra: Any) -> str:
    memory = await _store(api, content=text, namespace=namespace, **extra)
    await wait_enriched(api, memory["id"])  # its own links exist before the summary's
    return str(memory["id"])


async def test_weekly_summary_elaborates_on_the_important_memories_of_its_week(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    high = await _episode(api, namespace, "Shipped the billing export to CSV.", importance=0.9)
    mid = await _episode(api, namespace, "Reviewed the on-call rota with Sam.", importance=0.6)
    low = await _episode(api, namespace, "Watered the office plants.", importance=0.3)
    old = await _episode(api, namespace, "Planned the spring offsite agenda.", importance=0.9)
    meta = await _episode(
        api, namespace, "Nightly retrieval regression run passed.", importance=0.9, is_metadata=True
    )
    other = await _episode(
        api, namespace, "Last week: hiring and roadmap.", importance=0.9, tags=["narrative"]
    )
    archived = await _episode(api, namespace, "Drafted the Q3 budget memo.", importance=0.9)
    assert (await api.post(f"/api/memories/{archived}/archive")).status_code == 200
    _age(exo_stack, high, "now() - interval '2 days'")
    _age(exo_stack, mid, "now() - interval '6 days'")
    _age(exo_stack, old, "now() - interval '9 days'")

    summary = await _store(
        api,
        content="This week we shipped the billing export and sorted out the on-call rota.",
        namespace=namespace,
        tags=["narrative", "weekly-summary"],
    )
    await wait_enriched(api, summary["id"])
    assert _elaborates(exo_stack, summary["id"]) == {high: 0.6, mid: 0.6}
    assert not {low, old, meta, other, archived} & set(_elaborates(exo_stack, summary["id"]))

    # Enriching again (new content) adds nothing twice and keeps each link as it was.
    reply = await api.patch(
        f"/api/memories/{summary['id']}",
        json={"content": "This week: the billing export shipped and the on-call rota is set."},
    )
    assert reply.status_code == 200, reply.text
    await wait_enriched(api, summary["id"])
    links = _rows(
        exo_stack, "SELECT target_id FROM memory_links WHERE source_id = %s", summary["id"]
    )
    assert len(links) == len({t for (t,) in links})
    assert _elaborates(exo_stack, summary["id"]) == {high: 0.6, mid: 0.6}


async def test_epoch_links_its_month_episodes_and_narratives(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    episode = await _episode(api, namespace, "Migrated the search cluster.", importance=0.7)
    _age(exo_stack, episode, "now() - interval '20 days'")
    too_old = await _episode(api, namespace, "Signed the office lease.", importance=0.9)
    _age(exo_stack, too_old, "now() - interval '40 days'")
    this_month = await _episode(
        api,
        namespace,
        "Weekly: the search cluster migration finished.",
        tags=["narrative", "weekly-summary"],
    )
    _age(exo_stack, this_month, "now() - interval '1 second'")
    last_month = await _episode(
        api, namespace, "Weekly: lease talks went on.", tags=["narrative", "weekly-summary"]
    )
    _age(exo_stack, last_month, "date_trunc('month', now()) - interval '1 day'")

    epoch = await _store(
        api,
        content="This month the search cluster moved to new hardware.",
        namespace=namespace,
        tags=["narrative", "epoch"],
    )
    await wait_enriched(api, epoch["id"])
    assert _elaborates(exo_stack, epoch["id"]) == {episode: 0.6, this_month: 0.8}


def _background_waits(stack: Stack, work: str) -> tuple[float, float]:
    """Count and total seconds of retrieval's background waits for `work` (its metrics)."""
    port = stack.config.metrics_ports["retrieval"]
    text = httpx.get(f"http://{stack.config.host}:{port}/metrics", timeout=10).text
    found = {}
    for kind in ("count", "sum"):
        match = re.search(
            rf'exo_retrieval_background_wait_seconds_{kind}{{work="{work}"}} (\S+)', text
        )
        found[kind] = float(match.group(1)) if match else 0.0
    return found["count"], found["sum"]


async def test_enrichment_waits_for_searches_to_pause_yet_finishes(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    """Enrichment's lookups in retrieval are background work: they wait for searches to pause
    (up to a couple of seconds each), and the memory is still enriched while searches keep
    coming."""
    count_before, _ = _background_waits(exo_stack, "nearest")
    stop = asyncio.Event()
    answered: list[int] = []

    async def keep_searching() -> None:
        while not stop.is_set():
            reply = await api.post(
                "/api/memories/search", json={"query": "invoice ledger", "namespace": namespace}
            )
            assert reply.status_code == 200, reply.text
            answered.append(reply.status_code)

    async def searches_flowing() -> bool:
        if searches.done():
            searches.result()  # a failed search fails the test here, with its own message
        return len(answered) >= 3

    searches = asyncio.create_task(keep_searching())
    try:
        await until_async(searches_flowing, what="searches are answered", seconds=60)
        memory = await _store(
            api, content="The ledger service reconciles invoices nightly.", namespace=namespace
        )
        await wait_enriched(api, memory["id"])
    finally:
        stop.set()
        await searches
    # Its lookup went through the wait (how long it waits is timing, tested in retrieval's
    # unit tests: here searches reach retrieval in bursts behind the store's own work).
    count, _ = _background_waits(exo_stack, "nearest")
    assert count > count_before
