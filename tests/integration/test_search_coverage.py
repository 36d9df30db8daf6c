"""Coverage-aware ordering on the real stack (off by default, switched on here): a memory that
nearly repeats the best hit gives way to one that adds something, and results stay sorted."""

from __future__ import annotations

import httpx
import pytest

from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import search, store, wait_all_enriched
from exocortex.testing.settings import ApplySettings
from exocortex.testing.settle import wait_projector_drained

FILLERS = [
    "Grandma's pie recipe needs cold butter and a hot oven.",
    "The office printer jams whenever duplex mode is on.",
    "Tennis practice moves to the indoor courts in November.",
    "The cat refuses the new brand of dry food.",
]
PLAN = "The staging database moves to Postgres 16 on Friday night."
# The same plan in other words (cosine about 0.83 with PLAN: kept apart by dedup).
PLAN_AGAIN = "Friday, late: staging DB upgrade to Postgres 16."
# Something the plan does not say.
BACKUP = "Before the staging database migration, take a fresh backup and prove it restores."
QUERY = "when does the staging database move to Postgres 16"


async def _ranked(api: httpx.AsyncClient, namespace: str) -> list[tuple[str, float]]:
    # compact: no access is counted, so the two passes score alike
    body = await search(api, namespace, QUERY, limit=10, compact=True)
    return [(r["id"], r["score"]) for r in body["results"]]


async def test_a_near_copy_of_the_best_hit_gives_way(
    api: httpx.AsyncClient,
    namespace: str,
    exo_stack: Stack,
    change_settings: ApplySettings,
) -> None:
    assert (await api.get("/api/settings")).json()["scoring.coverage_weight"] == "0"
    # The query asks when: keep the when-question ordering out of what is compared here.
    await change_settings({"scoring.dated_weight": "0"})
    for note in FILLERS:
        await store(api, namespace, note)
    plan, again, backup = [await store(api, namespace, n) for n in (PLAN, PLAN_AGAIN, BACKUP)]
    assert len({plan, again, backup}) == 3, "dedup folded two of the notes together"
    # Scores are compared across the two passes: enrichment landing between them would move them.
    await wait_all_enriched(api, plan, again, backup)
    await wait_projector_drained(exo_stack)

    plain = await _ranked(api, namespace)
    order = [i for i, _ in plain]
    # Without coverage the plan's second wording ranks above the note that adds something.
    assert order[0] == plan
    assert order.index(again) < order.index(backup)

    await change_settings({"scoring.coverage_weight": "0.5", "search.coverage_similarity": "0.5"})
    covered = await _ranked(api, namespace)
    reordered = [i for i, _ in covered]
    assert reordered[0] == plan
    assert reordered.index(backup) < reordered.index(again)
    # The same memories and the same scores, handed out best first.
    assert sorted(reordered) == sorted(order)
    assert [s for _, s in covered] == pytest.approx([s for _, s in plain], rel=1e-3)
