"""Arrival neighbours on the real stack: a strong hit passes score to the memories stored right
next to it (same stretch of work), and never past the search's filters or another session."""

from __future__ import annotations

from typing import Any

import httpx

from exocortex.core.runtime.stack import Stack
from exocortex.retrieval.search import neighbours, repository
from exocortex.testing.rest import search, store
from exocortex.testing.settings import patched_settings

QUESTION = "Did you finally try the new ramen place on Fifth Street?"
ANSWER = "Yes! Went on Sunday with my sister; the broth was worth the queue."
FILLERS = [
    "The quarterly budget review moved to the second week of March.",
    "Renew the TLS certificate of the staging gateway before it lapses.",
    "The printer on the third floor needs a new toner cartridge.",
    "Team offsite votes: lake cabin won over the city hotel.",
]


def _by_id(body: Any) -> dict[str, dict[str, Any]]:
    return {r["memory"]["id"]: r for r in body["results"]}


PEOPLE = ["Ana", "Ben", "Chidi", "Dana", "Emil", "Farah", "Goran"]
CHORES = [
    "repaired the bicycle", "painted the fence", "filed the insurance claim", "tuned the piano",
    "cleaned the gutters", "renewed the passport", "planted tomatoes", "sorted the tax receipts",
    "fixed the leaking tap", "booked the dentist", "returned the library books",
]  # fmt: skip
PLACES = ["in Lisbon", "at the cabin", "downtown", "at the office", "in the garden"]
CONVERSATION = [
    "Did you finally try the new ramen place on Fifth Street?",
    "Yes! Went on Sunday with my sister; worth the queue.",
    "Was the ramen place on Fifth Street as busy as people say?",
    "Packed, we waited forty minutes, then had the spicy miso.",
]


async def _fill(api: httpx.AsyncClient, namespace: str, start: int, count: int) -> None:
    """Unrelated notes in the namespace (one at a time, so a run is repeatable): a namespace
    where a chance meeting of hits is rare, as in any real store."""
    for i in range(start, start + count):
        text = (
            f"{PEOPLE[i % len(PEOPLE)]} {CHORES[i % len(CHORES)]} "
            f"{PLACES[i % len(PLACES)]}, note {i}."
        )
        await store(api, namespace, text)


async def test_the_turn_after_a_hit_ranks_through_its_neighbour(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert settings["scoring.neighbour_weight"] == "0.5"
    assert settings["search.neighbour_window"] == "2"
    await _fill(api, namespace, 0, 120)
    ids = [await store(api, namespace, text) for text in CONVERSATION]
    asked, answered = ids[0], ids[1]

    # With the defaults the reply is among the best few; late-interaction re-scoring then
    # orders that head by token match, where a reply naming nothing of the query may fall
    # behind an unrelated note. The neighbour credit itself is checked without it. (compact:
    # no access is counted, so the second search scores as the first would have.)
    body = await search(api, namespace, "ramen place on Fifth Street", limit=10, compact=True)
    assert answered in [r["id"] for r in body["results"][:4]]
    async with patched_settings(api, exo_stack.nats_url, {"search.rerank_candidates": "0"}):
        body = await search(api, namespace, "ramen place on Fifth Street", limit=10)
    results = _by_id(body)
    ranked = [r["memory"]["id"] for r in body["results"]]
    # The hits on the subject sit next to each other in arrival order: evidence that it
    # means something here, so the reply that names nothing of the query is lifted to just
    # below the turn it answers, above every unrelated note.
    assert answered in results, ranked
    near = results[answered]["score_breakdown"]["neighbour"]
    assert near > 0
    assert ranked.index(answered) < 4
    assert results[answered]["score"] < results[asked]["score"]
    fillers = set(ranked) - set(ids)
    assert all(results[f]["score"] < results[answered]["score"] for f in fillers)


async def test_no_neighbour_credit_where_arrival_order_says_nothing(
    api: httpx.AsyncClient, namespace: str
) -> None:
    """The same turns stored among the unrelated notes, each far from the others: the hits do
    not sit together, so no one is credited for what was stored beside it."""
    for i, text in enumerate(CONVERSATION):
        await _fill(api, namespace, 30 * i, 30)
        await store(api, namespace, text)
    await _fill(api, namespace, 120, 30)

    body = await search(api, namespace, "ramen place on Fifth Street", limit=10)
    assert all(r["score_breakdown"]["neighbour"] == 0 for r in body["results"])


async def test_neighbours_respect_filters_and_sessions(
    api: httpx.AsyncClient, namespace: str
) -> None:
    asked = await store(api, namespace, QUESTION, tags=["food"])
    answered = await store(api, namespace, ANSWER)
    for text in FILLERS:
        await store(api, namespace, text, tags=["food"])

    # A tag filter holds for neighbours too: the untagged answer is not pulled in.
    body = await search(api, namespace, "ramen place on Fifth Street", tags=["food"])
    assert asked in _by_id(body)
    assert answered not in _by_id(body)

    # Different sessions are different stretches of work.
    other = f"{namespace}-sessions"
    await store(api, other, QUESTION, session_id="s-1")
    later = await store(api, other, ANSWER, session_id="s-2")
    body = await search(api, other, "ramen place on Fifth Street")
    assert _by_id(body)[later]["score_breakdown"]["neighbour"] == 0


async def test_an_import_keeps_its_items_in_order(api: httpx.AsyncClient, namespace: str) -> None:
    items = [
        {"content": f"Step {n} of the runbook: {t}", "namespace": namespace}
        for n, t in enumerate(["drain", "snapshot", "upgrade", "verify", "undrain", "announce"] * 3)
    ]
    reply = await api.post("/api/memories/import", json={"memories": items})
    assert reply.status_code == 200, reply.text
    ids = [r["id"] for r in reply.json()["results"]]
    assert all(ids)
    assert ids == sorted(ids)


async def test_the_neighbours_query_answers_on_its_generic_plan(
    api: httpx.AsyncClient, namespace: str, stack_db: Any
) -> None:
    """The neighbours query is written so Postgres can keep one generic plan for it (the window
    is part of the statement, the namespace comes from the seed's row): with that plan forced,
    the prepared statement still finds each seed's neighbours."""
    ids = [await store(api, namespace, f"Note {i} of the checklist.") for i in range(4)]
    cfg = neighbours.NeighbourSettings(weight=0.3, window=2)
    await stack_db.execute("SET plan_cache_mode = force_generic_plan")
    try:
        for _ in range(7):  # psycopg prepares a statement on its fifth run
            found, versions = await repository.around(stack_db, namespace, ids[1:3], cfg)
        cur = await stack_db.execute(
            "SELECT generic_plans FROM pg_prepared_statements"
            " WHERE statement LIKE '%w.seed%CROSS JOIN LATERAL%'"
        )
        (plans,) = [row["generic_plans"] for row in await cur.fetchall()]
    finally:
        await stack_db.execute("RESET plan_cache_mode")
    assert plans >= 2
    assert found == {
        ids[1]: [(ids[0], 1), (ids[2], 1), (ids[3], 2)],
        ids[2]: [(ids[1], 1), (ids[3], 1), (ids[0], 2)],
    }
    # Every seed and neighbour comes with its row's version (its stored vector is kept by it).
    assert versions.keys() == set(ids)
    assert all(version >= 1 for version in versions.values())
