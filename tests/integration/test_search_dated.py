"""Questions that ask when on the real stack (on by default): the note that says when rises above
notes that only discuss the same thing, and results stay sorted."""

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
]
DISCUSSED = [
    "Moving the staging database to Postgres 16 needs a maintenance window and a fresh backup.",
    "We argued for an hour about whether moving the staging database to Postgres 16 is worth it.",
]
DONE = "Done with the Postgres upgrade of staging last Friday."
QUERY = "when did we move the staging database to Postgres 16"


async def _ranked(api: httpx.AsyncClient, namespace: str, query: str) -> list[tuple[str, float]]:
    # compact: no access is counted, so the passes score alike
    body = await search(api, namespace, query, limit=10, compact=True)
    return [(r["id"], r["score"]) for r in body["results"]]


async def test_the_note_that_says_when_rises(
    api: httpx.AsyncClient,
    namespace: str,
    exo_stack: Stack,
    change_settings: ApplySettings,
) -> None:
    assert (await api.get("/api/settings")).json()["scoring.dated_weight"] == "0.2"
    await change_settings({"scoring.dated_weight": "0"})
    for note in FILLERS:
        await store(api, namespace, note)
    discussed = [await store(api, namespace, note) for note in DISCUSSED]
    done = await store(api, namespace, DONE)
    await wait_all_enriched(api, *discussed, done)
    await wait_projector_drained(exo_stack)

    plain = await _ranked(api, namespace, QUERY)
    order = [i for i, _ in plain]
    assert all(order.index(i) < order.index(done) for i in discussed)

    await change_settings({"scoring.dated_weight": "0.25"})
    dated = await _ranked(api, namespace, QUERY)
    assert dated[0][0] == done
    assert sorted(i for i, _ in dated) == sorted(order)
    assert [s for _, s in dated] == pytest.approx([s for _, s in plain], rel=1e-3)
    # A query that does not ask when is left as it was.
    other = "staging database to Postgres 16"
    before = await _ranked(api, namespace, other)
    await change_settings({"scoring.dated_weight": "0"})
    assert [i for i, _ in await _ranked(api, namespace, other)] == [i for i, _ in before]
