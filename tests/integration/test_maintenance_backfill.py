"""Entity backfill on the real stack: a memory whose enrichment never came, and one enriched
without the entities today's extractor finds, are handed back to enrichment; a memory with no
name in it is left alone, and a second run hands back nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from exocortex.testing.rest import store, wait_enriched


async def _run(api: httpx.AsyncClient, namespace: str, **body: Any) -> dict[str, Any]:
    reply = await api.post(
        "/api/maintenance/jobs/entity-backfill/run",
        json={"namespace": namespace, "wait_seconds": 120, **body},
    )
    assert reply.status_code == 200, reply.text
    run = reply.json()
    assert run["status"] == "succeeded", run["error"]
    return dict(run["report"])


async def _entities(db: Any, memory_id: str) -> set[str]:
    rows = await (
        await db.execute(
            "SELECT e.name FROM memory_entities me JOIN entities e ON e.id = me.entity_id "
            "WHERE me.memory_id = %s",
            (memory_id,),
        )
    ).fetchall()
    return {r["name"] for r in rows}


async def _until_entities(db: Any, memory_id: str) -> set[str]:
    for _ in range(600):
        names = await _entities(db, memory_id)
        if names:
            return names
        await asyncio.sleep(0.1)
    raise AssertionError(f"memory {memory_id} got no entity back")


async def test_backfill_hands_back_stuck_and_unlinked_memories_only(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    unlinked = await store(api, namespace, "The new API runs on Fastify with PostgreSQL behind it.")
    stuck = await store(api, namespace, "Our mobile team moved the builds to GitHub Actions.")
    plain = await store(api, namespace, "Lunch on Thursdays is at half past twelve.")
    for memory_id in (unlinked, stuck, plain):
        await wait_enriched(api, memory_id)
    assert {"Fastify", "PostgreSQL"} <= await _entities(stack_db, unlinked)
    # As if extracted by an older extractor that knew neither name.
    await stack_db.execute("DELETE FROM memory_entities WHERE memory_id = %s", (unlinked,))
    # As if its event had been lost: pending for an hour, nothing coming.
    await stack_db.execute("DELETE FROM memory_entities WHERE memory_id = %s", (stuck,))
    await stack_db.execute(
        "UPDATE memories SET enrichment_status = 'pending', updated_at = now() - interval '1 hour' "
        "WHERE id = %s",
        (stuck,),
    )

    preview = await _run(api, namespace, dry_run=True)
    assert (preview["stuck"], preview["unlinked_with_entities"]) == (1, 1), preview
    assert set(preview["sample_ids"]) == {unlinked, stuck}
    assert not await _entities(stack_db, unlinked)  # a dry run changes nothing

    report = await _run(api, namespace)
    assert report["changes"] == {"handed_to_enrichment": 2}, report
    assert {"Fastify", "PostgreSQL"} <= await _until_entities(stack_db, unlinked)
    assert "GitHub Actions" in await _until_entities(stack_db, stuck)
    for memory_id in (unlinked, stuck):
        assert (await wait_enriched(api, memory_id))["enrichment_status"] == "done"
    audit = await (
        await stack_db.execute(
            "SELECT memory_id, detail->>'reason' AS reason FROM memory_audit "
            "WHERE action = 'entity-backfill' AND memory_id = ANY(%s)",
            ([unlinked, stuck, plain],),
        )
    ).fetchall()
    assert {(a["memory_id"], a["reason"]) for a in audit} == {
        (unlinked, "unlinked"),
        (stuck, "stuck"),
    }

    again = await _run(api, namespace)
    assert (again["stuck"], again["unlinked_with_entities"]) == (0, 0), again
    assert again["changes"] == {"handed_to_enrichment": 0}


async def test_a_bad_parameter_is_a_400_naming_it(api: httpx.AsyncClient, namespace: str) -> None:
    reply = await api.post(
        "/api/maintenance/jobs/entity-backfill/run",
        json={"namespace": namespace, "params": {"limit": 0}},
    )
    assert reply.status_code == 400, reply.text
    assert "limit" in reply.text
