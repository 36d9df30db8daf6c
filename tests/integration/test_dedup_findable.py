"""A store that is acknowledged stays findable by its own words, however many near duplicates
came before it: past ``dedup.max_variants`` a near duplicate becomes a memory of its own instead
of being folded into a memory that can keep no more wordings."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.testing.rest import search, stored
from exocortex.testing.wait import until_async

COUNT = 60


def _text(i: int) -> str:
    # Semantic dedup sees these as one text (cosine well above 0.85); only the token differs.
    return f"Fault probe memory {i}: the fpx{i:05d} ledger entry for batch 6 was reconciled."


async def _findable(api: httpx.AsyncClient, namespace: str, token: str, memory_id: str) -> bool:
    results = (await search(api, namespace, token, limit=5))["results"]
    return any(
        # Found by the keyword index (its rank is null when only the vector index found it).
        r["memory"]["id"] == memory_id and r["score_breakdown"]["keyword_rank"]
        for r in results
    )


async def test_every_acknowledged_near_duplicate_is_findable_by_its_token(
    api: httpx.AsyncClient, stack_db: psycopg.AsyncConnection[dict[str, Any]], namespace: str
) -> None:
    settings = (await api.get("/api/settings")).json()
    assert (settings["dedup.keep_variants"], settings["dedup.max_variants"]) == ("true", "20")

    replies = [await stored(api, content=_text(i), namespace=namespace) for i in range(COUNT)]

    actions = [r["dedup_action"] for r in replies]
    # The premise: these fold as near duplicates (else the test proves nothing about overflow).
    assert actions.count("skipped") >= 20, actions
    # Past the variant limit a wording is kept as a memory of its own, and the reply says so.
    created = [r for r in replies if r["dedup_action"] == "created"]
    assert len(created) >= 2, actions
    for reply in created:
        assert reply["superseded_id"] is None
    for reply in replies:
        if reply["dedup_action"] == "skipped":
            assert reply["superseded_id"] == reply["id"]

    # No memory holds more wordings than the limit allows.
    cur = await stack_db.execute(
        "SELECT max(n) AS most FROM (SELECT count(*) AS n FROM memories "
        "WHERE namespace = %s AND parent_id IS NOT NULL AND chunk_index IS NULL "
        "GROUP BY parent_id) v",
        (namespace,),
    )
    row = await cur.fetchone()
    assert row is not None
    assert row["most"] <= 20

    async def unfindable() -> list[int]:
        checks = await asyncio.gather(
            *(_findable(api, namespace, f"fpx{i:05d}", replies[i]["id"]) for i in range(COUNT))
        )
        return [i for i, ok in enumerate(checks) if not ok]

    # A reply may answer before its keyword write is visible (indexed: false): poll.
    await until_async(
        unfindable,
        what=f"every one of {COUNT} acknowledged stores is found by its token (missing listed)",
        seconds=60,
        interval=0.5,
        accept=lambda missing: not missing,
    )

    # Every id a store answered with reads back, active.
    for memory_id in {r["id"] for r in replies}:
        read = await api.get(f"/api/memories/{memory_id}")
        assert read.status_code == 200, read.text
        assert read.json()["is_active"] is True
    # A memory of its own holds exactly the text that was sent.
    for i, reply in enumerate(replies):
        if reply["dedup_action"] == "created":
            assert (await api.get(f"/api/memories/{reply['id']}")).json()["content"] == _text(i)


async def test_import_past_the_variant_limit_keeps_each_text_findable(
    api: httpx.AsyncClient, namespace: str
) -> None:
    first = await stored(api, content=_text(0), namespace=namespace)
    reply = await api.post(
        "/api/memories/import",
        json={"memories": [{"content": _text(i), "namespace": namespace} for i in range(1, 31)]},
    )
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert all(r["error"] is None for r in results), results
    actions = [r["dedup_action"] for r in results]
    assert actions.count("skipped") == 20, actions
    assert actions.count("created") == 10, actions
    assert {r["id"] for r in results if r["dedup_action"] == "skipped"} == {first["id"]}

    async def all_found() -> bool:
        checks = await asyncio.gather(
            *(_findable(api, namespace, f"fpx{i:05d}", results[i - 1]["id"]) for i in range(1, 31))
        )
        return all(checks)

    await until_async(
        all_found, what="every imported text past the variant limit is found", seconds=60
    )
