"""Contextual vectors on the real stack (off by default, switched on here): enrichment embeds a
memory together with the one stored just before it in the same stretch of work, and search's
vector leg counts that similarity too, so a reply that names nothing of the question is found
through the question it answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest
import pytest_asyncio

from exocortex.core.clients.embedding import EmbeddingClient
from exocortex.core.domain.context import context_text
from exocortex.core.domain.vectors import from_bytes
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import search, store, wait_enriched
from exocortex.testing.settings import patched_settings

QUESTION = "How did the job interview at the architecture firm go on Tuesday?"
ANSWER = "Better than I hoped, they called back the same evening with an offer."
FILLERS = [
    "The quarterly budget review moved to the second week of March.",
    "Renew the TLS certificate of the staging gateway before it lapses.",
    "The printer on the third floor needs a new toner cartridge.",
    "Team offsite votes: lake cabin won over the city hotel.",
    "Grandma's lasagne needs two more layers of bechamel sauce.",
    "The cat refuses the new brand of dry food.",
    "Tennis practice moves to the indoor courts in November.",
    "The tax deadline for the freelance income is the fifteenth.",
    "Water the fern on the balcony twice a week in summer.",
    "The car's winter tyres are stored at the garage on Elm Road.",
    "Our band rehearses in the basement studio on Thursdays.",
    "The library card expires at the end of the year.",
]


@pytest_asyncio.fixture
async def contextual(api: httpx.AsyncClient, exo_stack: Stack) -> AsyncIterator[None]:
    """Contextual vectors made and used for the test's duration (the stack's settings are
    shared: put back after)."""
    on = {"enrichment.context_vectors": "true", "scoring.context_weight": "1"}
    async with patched_settings(api, exo_stack.nats_url, on):
        yield


async def _context(db: psycopg.AsyncConnection[dict[str, Any]], memory_id: str) -> Any:
    row = await (
        await db.execute("SELECT context_embedding FROM memories WHERE id = %s", (memory_id,))
    ).fetchone()
    assert row is not None
    return row["context_embedding"]


async def test_none_are_made_by_default(
    api: httpx.AsyncClient, namespace: str, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert settings["enrichment.context_vectors"] == "false"
    assert settings["scoring.context_weight"] == "0"
    await store(api, namespace, QUESTION)
    answered = await store(api, namespace, ANSWER)
    await wait_enriched(api, answered)
    assert await _context(stack_db, answered) is None


@pytest.mark.usefixtures("contextual")
async def test_enrichment_embeds_a_memory_with_the_one_stored_before(
    api: httpx.AsyncClient,
    namespace: str,
    stack_db: psycopg.AsyncConnection[dict[str, Any]],
    embedding_client: EmbeddingClient,
) -> None:
    asked = await store(api, namespace, QUESTION)
    answered = await store(api, namespace, ANSWER)
    for memory_id in (asked, answered):
        await wait_enriched(api, memory_id)
    # The first memory of the namespace has nothing before it.
    assert await _context(stack_db, asked) is None
    stored = await _context(stack_db, answered)
    assert stored is not None
    text = context_text(QUESTION, ANSWER)
    assert text is not None
    expected = (await embedding_client.embed([text]))[0]
    got = from_bytes(bytes(stored))
    cosine = float(np.dot(got, expected) / (np.linalg.norm(got) * np.linalg.norm(expected)))
    assert cosine > 0.999


@pytest.mark.usefixtures("contextual")
async def test_another_session_gives_no_context(
    api: httpx.AsyncClient, namespace: str, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    first = await store(api, namespace, QUESTION, session_id="morning")
    second = await store(api, namespace, ANSWER, session_id="evening")
    third = await store(api, namespace, FILLERS[0], session_id="evening")
    for memory_id in (first, second, third):
        await wait_enriched(api, memory_id)
    assert await _context(stack_db, second) is None
    assert await _context(stack_db, third) is not None


async def _answer_rank(api: httpx.AsyncClient, namespace: str, answered: str) -> int:
    body = await search(api, namespace, "job interview at the architecture firm", limit=25)
    for result in body["results"]:
        if result["memory"]["id"] == answered:
            rank = result["score_breakdown"]["vector_rank"]
            assert rank, result["score_breakdown"]
            return int(rank)
    raise AssertionError("the answer was not found at all")


@pytest.mark.usefixtures("contextual")
async def test_a_reply_is_found_through_the_question_it_answers(
    api: httpx.AsyncClient, namespace: str, exo_stack: Stack
) -> None:
    for text in FILLERS:
        await store(api, namespace, text)
    asked = await store(api, namespace, QUESTION)
    answered = await store(api, namespace, ANSWER)
    await wait_enriched(api, answered)
    body = await search(api, namespace, "job interview at the architecture firm", limit=25)
    # The direct hit stays first; the reply, which names nothing of the query, comes right
    # after it in the vector leg, above every unrelated note.
    assert body["results"][0]["memory"]["id"] == asked
    with_context = await _answer_rank(api, namespace, answered)
    assert with_context == 2
    async with patched_settings(api, exo_stack.nats_url, {"scoring.context_weight": "0"}):
        without = await _answer_rank(api, namespace, answered)
    assert without > with_context


@pytest.mark.usefixtures("contextual")
async def test_an_import_of_an_export_makes_them_again(
    api: httpx.AsyncClient, namespace: str, stack_db: psycopg.AsyncConnection[dict[str, Any]]
) -> None:
    await store(api, namespace, QUESTION)
    answered = await store(api, namespace, ANSWER)
    await wait_enriched(api, answered)
    made = await _context(stack_db, answered)
    assert made is not None
    document = (await api.get("/api/export", params={"namespace": namespace})).json()
    await stack_db.execute("DELETE FROM memories WHERE namespace = %s", (namespace,))
    imported = await api.post("/api/memories/import", json=document)
    assert imported.status_code == 200, imported.text
    assert imported.json()["sections"]["memories"]["created"] == 2
    # The export carries no contextual vector; the import embeds the pair again.
    again = await _context(stack_db, answered)
    assert again is not None
    a, b = from_bytes(bytes(made)), from_bytes(bytes(again))
    assert float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) > 0.999
