"""A clear direct hit stays first: the signals beyond the two indexes (arrival neighbours, the
graph, expansion, boosts) reorder what the indexes found, and never lift a memory the indexes
ranked lower above the one both the query and the memory's meaning point at.

Each scenario stores a handful of unrelated memories one after another in a fresh namespace (so
every one is an arrival neighbour of the next, within the time bound) and waits for enrichment
(entities and similarity links feed the graph signal), then asks a question worded unlike the
memory that answers it.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from exocortex.testing.rest import search, store, wait_enriched

DEPLOY = "Our deploys use blue-green releases on Kubernetes so customers never see an outage"
UNRELATED = [
    "Grandma's apple pie: six apples, a cup of sugar, cinnamon, and bake it for 45 minutes.",
    "The quarterly tax filing deadline is April 15th; the accountant needs receipts by March.",
    "Tennis practice moved to Thursday evenings at the club, courts 3 and 4.",
    "The office printer on the second floor jams whenever it prints double-sided.",
    "Our cat Miso only eats the salmon kibble and hides under the sofa during storms.",
]
BACKUPS = "Postgres is backed up every night to an S3 bucket and snapshots are kept for 30 days."
ALLERGY = "Maya is allergic to peanuts, so the team lunch order must avoid satay and pad thai."
ONCALL = "When the pager fires at night, Priya is first on call and escalates to Tom after 15 min."

# (memories in storing order, index of the direct hit, query)
SCENARIOS: dict[str, tuple[list[str], int, str]] = {
    "deploy first": (
        [DEPLOY, *UNRELATED],
        0,
        "how do we ship new versions without downtime for users",
    ),
    "deploy in the middle": (
        [*UNRELATED[:3], DEPLOY, *UNRELATED[3:]],
        3,
        "how do we ship new versions without downtime for users",
    ),
    "deploy last": (
        [*UNRELATED, DEPLOY],
        5,
        "how do we ship new versions without downtime for users",
    ),
    "backups": (
        [UNRELATED[0], UNRELATED[1], BACKUPS, UNRELATED[2], UNRELATED[3]],
        2,
        "where do copies of the database go and how long do we keep them",
    ),
    "allergy": (
        [UNRELATED[3], UNRELATED[4], ALLERGY, UNRELATED[0], UNRELATED[2]],
        2,
        "what food should we not order for the office because of a colleague",
    ),
    "on call": (
        [UNRELATED[4], ONCALL, UNRELATED[1], UNRELATED[3], UNRELATED[0]],
        1,
        "who gets woken up when production breaks after hours",
    ),
}


def _describe(body: Any) -> str:
    return "\n".join(
        f"{r['score']:.4f} {r['score_breakdown']} {r['memory']['content'][:40]}"
        for r in body["results"]
    )


@pytest.mark.parametrize("scenario", list(SCENARIOS))
async def test_a_clear_direct_hit_ranks_first(
    api: httpx.AsyncClient, namespace: str, scenario: str
) -> None:
    texts, hit, query = SCENARIOS[scenario]
    ids = [await store(api, namespace, text) for text in texts]
    for memory_id in ids:
        await wait_enriched(api, memory_id)

    body = await search(api, namespace, query, limit=len(ids))
    ranked = [r["memory"]["id"] for r in body["results"]]
    assert ranked[0] == ids[hit], _describe(body)


async def test_arrival_neighbours_still_lift_the_turn_after_a_hit(
    api: httpx.AsyncClient, namespace: str
) -> None:
    """The guard keeps the signal: a reply sharing no words with the query comes right after
    the turn that names the subject, above the unrelated memories stored around them."""
    asked = await store(api, namespace, "Did you finally try the new ramen place on Fifth Street?")
    answered = await store(api, namespace, "Yes! Went on Sunday with my sister, worth the queue.")
    for text in UNRELATED:
        await store(api, namespace, text)

    body = await search(api, namespace, "ramen place on Fifth Street", limit=7)
    ranked = [r["memory"]["id"] for r in body["results"]]
    assert ranked[:2] == [asked, answered], _describe(body)
