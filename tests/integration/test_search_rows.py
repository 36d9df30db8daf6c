"""Search reads its candidates' rows and their extras (link count, goal relevance) in one
statement: the rows are exactly those the shared memory reader gives, within the caller's
scope, and the extras count every link either way."""

from __future__ import annotations

from typing import Any

import httpx

from exocortex.core import scope
from exocortex.core.repositories import memories
from exocortex.retrieval.search import repository, scoring
from exocortex.testing.rest import store, wait_enriched


async def test_rows_come_with_their_links_counted_both_ways(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    hub, left, right, alone = [
        await store(api, namespace, text)
        for text in (
            "The release train leaves every second Tuesday.",
            "Hotfixes ride the release train only with a sign-off.",
            "The release notes are drafted the Friday before.",
            "The office plants are watered on Mondays.",
        )
    ]
    for source, target in ((hub, left), (right, hub)):
        reply = await api.post(f"/api/memories/{source}/links", json={"target_id": target})
        assert reply.status_code == 201, reply.text
    # Enrichment rewrites each row a moment after its store: the two reads below must not
    # straddle it.
    for memory_id in (hub, left, right, alone):
        await wait_enriched(api, memory_id)
    ids = [hub, left, right, alone, "01NOTAMEMORY0000000000000"]
    rows = await repository.records(stack_db, ids, scoring.GOAL_EXPLICIT, scoring.GOAL_IMPLICIT)
    plain = await memories.get_records(stack_db, ids)
    assert {i: record for i, (record, _) in rows.items()} == plain
    assert {i: more.links for i, (_, more) in rows.items()} == {
        hub: 2,
        left: 1,
        right: 1,
        alone: 0,
    }
    assert all(more.goal == 0.0 for _, more in rows.values())


async def test_rows_outside_the_callers_scope_are_not_read(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    memory_id = await store(api, namespace, "Scoped rows stay in their namespace.")
    token = scope.caller_scope.set(frozenset({"some-other-namespace"}))
    try:
        hidden = await repository.records(stack_db, [memory_id], 1.0, 0.7)
    finally:
        scope.caller_scope.reset(token)
    shown = await repository.records(stack_db, [memory_id], 1.0, 0.7)
    assert hidden == {}
    assert list(shown) == [memory_id]
