"""One-hop expansion on the real stack: a memory linked to the top hit, or naming a rare entity
it names, is found though it shares no word with the query; never one of another namespace,
an archived or deleted one, or one the search's filters exclude; and nothing with weight 0."""

from __future__ import annotations

import httpx
import psycopg

from exocortex.core.ids import new_id
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import result_ids, search, store, store_among_fillers, wait_all_enriched
from exocortex.testing.settings import patched_settings

QUERY = "staging database migration index rebuild"
HIT = "The staging database migration finished on Tuesday after the index rebuild."
LINKED = "Kofi signed off on the rollout plan over lunch."
MATE = "Remember to water the ficus near the window every Friday."
ON = {"scoring.expand_weight": "1.0", "search.rerank_candidates": "0"}
OFF = {"scoring.expand_weight": "0", "search.rerank_candidates": "0"}


async def _link(api: httpx.AsyncClient, source: str, target: str) -> None:
    reply = await api.post(
        f"/api/memories/{source}/links", json={"target_id": target, "strength": 1.0}
    )
    assert reply.status_code == 201, reply.text


async def test_one_hop_adds_what_is_linked_to_the_top_hit_or_names_its_entity(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert settings["scoring.expand_weight"] == "0"  # off by default
    other = f"{namespace}-other"
    # The related memories are stored far from the hit: no arrival-neighbour credit.
    linked = await store(api, namespace, LINKED)
    mate = await store(api, namespace, MATE)
    hit = await store_among_fillers(api, namespace, HIT, tags=["kept"])
    archived = await store(api, namespace, "The espresso machine descaling kit arrived.")
    deleted = await store(api, namespace, "Parking permits are renewed in January.")
    untagged_filter = await store(api, namespace, "The choir rehearses on Wednesdays.")
    elsewhere = await store(api, other, "Kofi signed off on the other rollout plan.")
    await wait_all_enriched(api, linked, mate, hit, archived, deleted, untagged_filter, elsewhere)

    for target in (linked, archived, deleted, untagged_filter):
        await _link(api, hit, target)
    entity_id = new_id()  # an id as enrichment makes them (a backup of the store checks it)
    with psycopg.connect(exo_stack.database_url, autocommit=True) as conn:
        # A link across namespaces, and a rare entity the hit shares with one memory of its
        # namespace and one of another, written as enrichment would.
        conn.execute(
            "INSERT INTO memory_links (source_id, target_id, strength) VALUES (%s, %s, 1.0)",
            (hit, elsewhere),
        )
        conn.execute(
            "INSERT INTO entities (id, name, namespace) VALUES (%s, 'Orchid rollout', %s)",
            (entity_id, namespace),
        )
        for memory_id in (hit, mate, elsewhere):
            conn.execute(
                "INSERT INTO memory_entities (memory_id, entity_id) VALUES (%s, %s)",
                (memory_id, entity_id),
            )
    assert (await api.post(f"/api/memories/{archived}/archive")).status_code == 200
    assert (await api.delete(f"/api/memories/{deleted}")).status_code == 200

    # Compact searches count no access, so each one scores as the first did.
    async with patched_settings(api, exo_stack.nats_url, OFF):
        body = await search(api, namespace, QUERY, limit=4, compact=True)
    assert result_ids(body)[0] == hit
    assert linked not in result_ids(body)
    assert mate not in result_ids(body)

    async with patched_settings(api, exo_stack.nats_url, ON):
        body = await search(api, namespace, QUERY, limit=4, compact=True)
        everything = await search(api, namespace, QUERY, limit=50, compact=True)
        tagged = await search(api, namespace, QUERY, limit=50, compact=True, tags=["kept"])
    ranked = result_ids(body)
    assert ranked[0] == hit, ranked
    # Linked to the top hit, and sharing its rare entity: found, below the hit.
    assert linked in ranked, ranked
    assert mate in ranked, ranked
    # Never a memory of another namespace, an archived or a deleted one.
    found = set(result_ids(everything))
    assert not {elsewhere, archived, deleted} & found
    # Nor one the search's filters exclude: only the hit carries the tag.
    assert result_ids(tagged) == [hit]
