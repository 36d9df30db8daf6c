"""Token vectors kept with each memory for late-interaction re-scoring, on the real stack: made
with the memory's vector when it is stored, replaced when its text changes, gone with it, and
read by search instead of running the model on its results (memories without them, as stored
before they were kept, are still encoded at search time)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import numpy as np
import psycopg

from exocortex.core.domain import token_vectors
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import search, store, wait_all_enriched
from exocortex.testing.settings import patched_settings
from exocortex.testing.settle import wait_projector_drained

NOTES = [
    "Our deploys use blue-green releases on Kubernetes so customers never see an outage.",
    "The canary release goes to five percent of users before the full rollout.",
    "Rollbacks of a bad release take one click in the deploy dashboard.",
    "Grandma's pie recipe needs cold butter and a hot oven.",
    "Kubernetes pods restart when the liveness probe fails three times.",
]
QUERIES = [
    "how do we ship new versions without downtime for users",
    "what happens when a release goes wrong",
]


async def _row(stack: Stack, memory_id: str) -> dict[str, Any] | None:
    async with await psycopg.AsyncConnection.connect(
        stack.database_url, row_factory=psycopg.rows.dict_row
    ) as conn:
        cur = await conn.execute(
            "SELECT t.model, t.dimensions, t.tokens, m.embedding_model"
            "  FROM memory_tokens t JOIN memories m ON m.id = t.memory_id"
            " WHERE t.memory_id = %s",
            (memory_id,),
        )
        return await cur.fetchone()


async def _execute(stack: Stack, sql: str, *args: object) -> None:
    async with await psycopg.AsyncConnection.connect(stack.database_url) as conn:
        await conn.execute(sql, args)


def _rescored(stack: Stack) -> dict[str, float]:
    """Retrieval's count of re-scored memories by where their token vectors came from."""
    port = stack.config.metrics_ports["retrieval"]
    text = httpx.get(f"http://{stack.config.host}:{port}/metrics", timeout=10).text
    found = dict.fromkeys(("cached", "stored", "encoded"), 0.0)
    for source in found:
        match = re.search(rf'exo_retrieval_rerank_tokens_total{{source="{source}"}} (\S+)', text)
        found[source] = float(match.group(1)) if match else 0.0
    return found


async def test_tokens_are_kept_with_the_memory_and_follow_its_text(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    text = "The staging database moved to the new cluster on Tuesday night."
    memory_id = await store(api, namespace, text)
    row = await _row(exo_stack, memory_id)
    assert row is not None, "no token vectors were kept with the stored memory"
    assert row["model"] == row["embedding_model"]
    assert row["dimensions"] == 384
    first = token_vectors.unpack(row["tokens"], row["dimensions"])
    # One row a word piece, the special tokens left out: a dozen words, a dozen or so rows.
    assert 10 <= first.shape[0] <= 20
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-4)
    await wait_all_enriched(api, memory_id)

    # A change that leaves the text alone leaves them alone.
    reply = await api.patch(f"/api/memories/{memory_id}", json={"importance": 0.9})
    assert reply.status_code == 200, reply.text
    kept = await _row(exo_stack, memory_id)
    assert kept is not None
    assert kept["tokens"] == row["tokens"]

    # New text: new token vectors, of the new text.
    edited = "The staging database moved to the new cluster on Tuesday night, and nobody noticed."
    reply = await api.patch(f"/api/memories/{memory_id}", json={"content": edited})
    assert reply.status_code == 200, reply.text
    replaced = await _row(exo_stack, memory_id)
    assert replaced is not None, "the edited memory kept no token vectors"
    again = token_vectors.unpack(replaced["tokens"], replaced["dimensions"])
    assert again.shape[0] > first.shape[0]
    assert replaced["tokens"] != row["tokens"]

    await api.delete(f"/api/memories/{memory_id}")
    assert await _row(exo_stack, memory_id) is None


async def test_a_text_changed_by_any_path_drops_its_tokens(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    """Whatever writes new text (a merge, a redaction, a restore, a re-embedding under another
    model), the token vectors of the old text are deleted with it in Postgres itself."""
    one = await store(api, namespace, "The quarterly report is due on the first Monday of May.")
    two = await store(api, namespace, "The office plants are watered on Fridays by Priya.")
    await wait_all_enriched(api, one, two)
    assert await _row(exo_stack, one) is not None
    assert await _row(exo_stack, two) is not None
    await _execute(exo_stack, "UPDATE memories SET content = 'redacted' WHERE id = %s", one)
    await _execute(
        exo_stack, "UPDATE memories SET embedding_model = 'another-model' WHERE id = %s", two
    )
    assert await _row(exo_stack, one) is None
    assert await _row(exo_stack, two) is None


async def test_search_reads_stored_tokens_instead_of_encoding_memories(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    ids = [await store(api, namespace, note) for note in NOTES]
    await wait_all_enriched(api, *ids)
    await wait_projector_drained(exo_stack)
    for memory_id in ids:
        assert await _row(exo_stack, memory_id) is not None
    async with patched_settings(api, exo_stack.nats_url, {"search.rerank_candidates": "20"}):
        before = _rescored(exo_stack)
        for query in QUERIES:
            body = await search(api, namespace, query, limit=10, compact=True)
            assert {r["id"] for r in body["results"]} == set(ids)
        after = _rescored(exo_stack)
        # Every result was re-scored, none of them run through the model to do it.
        assert after["encoded"] == before["encoded"]
        assert after["stored"] > before["stored"]
        rescored = sum(after.values()) - sum(before.values())
        assert rescored == len(QUERIES) * len(ids)

        # A memory stored before token vectors were kept (none in the table) is encoded at
        # search time, as before.
        older = await store(api, namespace, "Release trains leave every second Wednesday.")
        await wait_all_enriched(api, older)
        await wait_projector_drained(exo_stack)
        await _execute(exo_stack, "DELETE FROM memory_tokens WHERE memory_id = %s", older)
        before = _rescored(exo_stack)
        body = await search(api, namespace, "when do release trains leave", limit=10, compact=True)
        assert older in {r["id"] for r in body["results"]}
        after = _rescored(exo_stack)
        assert after["encoded"] == before["encoded"] + 1


async def test_the_repair_job_keeps_tokens_for_memories_that_have_none(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    """An upgraded store's memories (stored before token vectors were kept) get them from the
    repair job, with its progress; one whose vector is made again gets them from that run."""
    older = await store(api, namespace, "The backup tapes are rotated to the vault every Monday.")
    stale = await store(api, namespace, "The wifi password changes every quarter in the lobby.")
    await wait_all_enriched(api, older, stale)
    original = await _row(exo_stack, older)
    assert original is not None
    await _execute(exo_stack, "DELETE FROM memory_tokens WHERE memory_id = %s", older)
    await _execute(
        exo_stack, "UPDATE memories SET embedding_model = 'an-older-model' WHERE id = %s", stale
    )
    assert await _row(exo_stack, stale) is None

    reply = await api.post(
        "/api/maintenance/jobs/repair/run",
        json={"wait_seconds": 120, "params": {"prune_outbox_days": 0}},
    )
    assert reply.status_code == 200, reply.text
    run = reply.json()
    assert run["status"] == "succeeded", run["error"]
    assert run["report"]["tokens"]["kept"] >= 1
    assert run["progress"]["stage"] in ("token vectors", "re-embedding")

    back = await _row(exo_stack, older)
    assert back is not None, "the repair job kept no token vectors for the older memory"
    before = token_vectors.unpack(original["tokens"], original["dimensions"])
    after = token_vectors.unpack(back["tokens"], back["dimensions"])
    assert after.shape == before.shape
    assert float((before * after).sum(axis=1).min()) > 0.99
    again = await _row(exo_stack, stale)
    assert again is not None, "the re-embedded memory kept no token vectors"
    assert again["model"] == again["embedding_model"] != "an-older-model"


async def test_an_import_keeps_the_token_vectors_of_what_it_creates(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    """Imported memories get their token vectors from the import's own model run, as a single
    store does: no later run of the model over them is needed."""
    texts = [
        "The quarterly planning review happens in the second week of March.",
        "Invoices above ten thousand euros need a second signature from finance.",
    ]
    reply = await api.post(
        "/api/memories/import",
        json={"memories": [{"content": t, "namespace": namespace} for t in texts]},
    )
    assert reply.status_code == 200, reply.text
    ids = [item["id"] for item in reply.json()["results"]]
    assert len(ids) == 2
    for memory_id in ids:
        row = await _row(exo_stack, memory_id)
        assert row is not None, f"no token vectors were kept with imported {memory_id}"
        assert row["model"] == row["embedding_model"]
        assert token_vectors.unpack(row["tokens"], row["dimensions"]).shape[0] >= 8


async def test_no_token_vectors_are_kept_while_re_scoring_is_off(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    """Turned off (``search.rerank_candidates`` 0), nothing is stored for re-scoring: a single
    store and an import keep no token vectors (the repair job makes them once it is on)."""
    async with patched_settings(api, exo_stack.nats_url, {"search.rerank_candidates": "0"}):
        single = await store(
            api, namespace, "The coffee machine on floor three is descaled monthly."
        )
        reply = await api.post(
            "/api/memories/import",
            json={
                "memories": [
                    {"content": "Parking passes renew every January.", "namespace": namespace}
                ]
            },
        )
        assert reply.status_code == 200, reply.text
        imported = reply.json()["results"][0]["id"]
    assert await _row(exo_stack, single) is None
    assert await _row(exo_stack, imported) is None
