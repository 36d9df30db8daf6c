"""Late-interaction re-scoring on the real stack (on by default, switched off here for the plain
order): the head of the ranking is ordered again by token-level match, and results stay sorted
by score."""

from __future__ import annotations

import httpx
import pytest

from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import search, store, wait_all_enriched
from exocortex.testing.settings import patched_settings
from exocortex.testing.settle import wait_projector_drained

NOTES = [
    "Our deploys use blue-green releases on Kubernetes so customers never see an outage.",
    "The canary release goes to five percent of users before the full rollout.",
    "Rollbacks of a bad release take one click in the deploy dashboard.",
    "Grandma's pie recipe needs cold butter and a hot oven.",
    "The tax deadline for the freelance income is the fifteenth.",
    "Tennis practice moves to the indoor courts in November.",
    "The office printer jams whenever duplex mode is on.",
    "The cat refuses the new brand of dry food.",
    "Kubernetes pods restart when the liveness probe fails three times.",
    "Release notes are written by the engineer who merged the change.",
]
QUERIES = [
    "how do we ship new versions without downtime for users",
    "what happens when a release goes wrong",
    "kubernetes probes",
]


async def _ranked(api: httpx.AsyncClient, namespace: str, query: str) -> list[tuple[str, float]]:
    # compact: no access is counted, so the two passes score alike
    body = await search(api, namespace, query, limit=10, compact=True)
    return [(r["id"], r["score"]) for r in body["results"]]


async def test_the_head_is_reordered_and_stays_sorted(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    assert (await api.get("/api/settings")).json()["search.rerank_candidates"] == "20"
    ids = [await store(api, namespace, note) for note in NOTES]
    # Scores are compared across the two passes: enrichment (entities, links, keywords)
    # landing between them would move them.
    await wait_all_enriched(api, *ids)
    await wait_projector_drained(exo_stack)
    async with patched_settings(api, exo_stack.nats_url, {"search.rerank_candidates": "0"}):
        plain = {q: await _ranked(api, namespace, q) for q in QUERIES}
    again = {q: await _ranked(api, namespace, q) for q in QUERIES}
    for query in QUERIES:
        before, after = plain[query], again[query]
        # The same memories (all ten fit the head), the same scores handed out best first.
        assert sorted(i for i, _ in after) == sorted(i for i, _ in before), query
        assert [s for _, s in after] == pytest.approx([s for _, s in before], rel=1e-3), query
        assert [s for _, s in after] == sorted((s for _, s in after), reverse=True)
    # Token-level match moved something somewhere (the order is not the plain one everywhere).
    assert any([i for i, _ in again[q]] != [i for i, _ in plain[q]] for q in QUERIES)
