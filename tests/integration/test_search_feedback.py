"""Pseudo-relevance feedback on the real stack: with it on, a memory close in meaning to the top
hit but sharing nothing with the query rises above one the query itself ranks second; with
weight 0 (the default) it does not; never a memory of another namespace or outside the search's
filters."""

from __future__ import annotations

import httpx

from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import result_ids, search, store, store_among_fillers, wait_all_enriched
from exocortex.testing.settings import patched_settings

QUERY = "staging database migration index rebuild"
HIT = (
    "The staging database migration finished after the index rebuild; the orchid greenhouse "
    "irrigation valves were replaced the same week."
)
# What the hit is also about, in none of the query's words.
MATE = "The orchid greenhouse irrigation valves were replaced."
# Shares a word and some meaning with the query, nothing with the rest of the hit.
NEAR = "The database backup runs overnight."
# One seed (the hit) and the query moved most of the way to it: the feedback list ranks the
# hit's own subject first. Re-scoring off, so the order is the fusion's.
ON = {
    "scoring.feedback_weight": "10",
    "search.feedback_seeds": "1",
    "search.feedback_mix": "10",
    "search.rerank_candidates": "0",
}
OFF = {**ON, "scoring.feedback_weight": "0"}


async def test_feedback_lifts_what_the_top_hit_is_about_within_the_filters(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert settings["scoring.feedback_weight"] == "0"  # off by default
    other = f"{namespace}-other"
    # The mate is stored far from the hit: no arrival-neighbour credit.
    mate = await store(api, namespace, MATE)
    hit = await store_among_fillers(api, namespace, HIT, tags=["kept"])
    near = await store(api, namespace, NEAR)
    elsewhere = await store(api, other, MATE + " Twice.")
    # Enrichment's links (the graph list) in place before either search, so both see them.
    await wait_all_enriched(api, mate, hit, near, elsewhere)

    # Compact searches count no access, so each one scores as the first did.
    async with patched_settings(api, exo_stack.nats_url, OFF):
        off = result_ids(await search(api, namespace, QUERY, limit=5, compact=True))
    assert off[0] == hit, off
    assert off.index(near) < (off.index(mate) if mate in off else len(off)), off

    async with patched_settings(api, exo_stack.nats_url, ON):
        on = result_ids(await search(api, namespace, QUERY, limit=5, compact=True))
        everything = result_ids(await search(api, namespace, QUERY, limit=50, compact=True))
        tagged = result_ids(
            await search(api, namespace, QUERY, limit=50, compact=True, tags=["kept"])
        )
    assert on[0] == hit, on
    assert on.index(mate) < on.index(near), on
    assert elsewhere not in everything
    assert tagged == [hit]
