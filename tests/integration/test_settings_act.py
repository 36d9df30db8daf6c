"""Every setting a person can change changes behaviour, on the real stack: the RRF threshold and
the keyword field weight move search results, `tag_alias.<from>` keys map stored tags, and the
settings the product does not have are refused with the reason (their rows are gone)."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
import pytest

from exocortex.core.domain.setting_schema import REMOVED
from exocortex.testing.settings import ApplySettings
from exocortex.testing.wait import until_async


async def _search(api: httpx.AsyncClient, namespace: str, query: str) -> list[dict[str, Any]]:
    reply = await api.post("/api/memories/search", json={"query": query, "namespace": namespace})
    assert reply.status_code == 200, reply.text
    results: list[dict[str, Any]] = reply.json()["results"]
    return results


async def _store(api: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    reply = await api.post("/api/memories", json=body)
    assert reply.status_code == 201, reply.text
    stored: dict[str, Any] = reply.json()
    return stored


@pytest.mark.parametrize("key", sorted(REMOVED))
async def test_a_removed_setting_is_refused_with_the_reason(
    api: httpx.AsyncClient, key: str
) -> None:
    reply = await api.patch("/api/settings", json={key: "1"})
    assert reply.status_code == 400, reply.text
    assert reply.json()["field"] == key
    assert "was removed" in reply.json()["detail"]
    listed = (await api.get("/api/settings")).json()
    assert key not in listed
    schema = (await api.get("/api/settings/schema")).json()
    assert key not in schema


async def test_the_schema_says_what_each_setting_does(api: httpx.AsyncClient) -> None:
    schema = (await api.get("/api/settings/schema")).json()
    assert all(spec["help"].strip() for spec in schema.values())
    assert "deleted for good" in schema["trash.auto_purge_days"]["help"]


async def test_backup_max_count_is_a_setting(api: httpx.AsyncClient) -> None:
    assert (await api.get("/api/settings")).json()["backup.max_count"] == "7"
    bad = await api.patch("/api/settings", json={"backup.max_count": "0"})
    assert bad.status_code == 400, bad.text
    assert bad.json()["field"] == "backup.max_count"


async def test_rrf_min_score_drops_results_under_it(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    await _store(
        api,
        {"content": "The heron nests beside the millpond every spring.", "namespace": namespace},
    )
    query = "heron millpond nests"
    found = await until_async(
        lambda: _search(api, namespace, query), what="the memory is searchable"
    )
    best = max(r["score"] for r in found)
    assert best < 1
    # A threshold above the best score keeps nothing; the default (0) keeps it again.
    await change_settings({"scoring.rrf_min_score": "1"})
    assert await _search(api, namespace, query) == []
    await change_settings({"scoring.rrf_min_score": "0"})
    assert len(await _search(api, namespace, query)) == 1


async def test_keyword_boost_weighs_a_keywords_match(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    await _store(
        api,
        {
            "content": "Quokka quokka quokka: the quokka colony on Rottnest island grew again.",
            "namespace": namespace,
        },
    )

    async def fts_score() -> float:
        rows = await _search(api, namespace, "quokka")
        return float(rows[0]["fts_score"]) if rows else 0.0

    # Without the keywords field's weight only the content match counts.
    await change_settings({"scoring.keyword_boost": "0"})
    lower = await until_async(
        fts_score, what="the memory is found by keyword", accept=lambda s: s > 0
    )
    # Enrichment writes the keywords field after the store: wait until a heavy weight shows it.
    await change_settings({"scoring.keyword_boost": "10"})
    higher = await until_async(
        fts_score,
        what="the keywords field is indexed and weighs 10",
        accept=lambda s: s > lower,
    )
    await change_settings({"scoring.keyword_boost": "2.0"})
    default = await fts_score()
    assert higher > default > lower > 0


async def test_tag_alias_keys_map_stored_tags(
    api: httpx.AsyncClient, namespace: str, change_settings: ApplySettings
) -> None:
    alias, target = f"a{uuid.uuid4().hex[:8]}", f"t{uuid.uuid4().hex[:8]}"
    key = f"tag_alias.{alias}"
    # Put back as empty afterwards, which turns the alias off.
    await change_settings({key: target})
    assert (await api.get("/api/settings")).json()[key] == target
    stored = await _store(
        api,
        {
            "content": f"A note tagged with the alias {uuid.uuid4().hex}.",
            "namespace": namespace,
            "tags": [alias.upper()],
        },
    )
    assert stored["tags"] == [target]
    bad = await api.patch("/api/settings", json={"tag_alias.": "x"})
    assert bad.status_code == 400, bad.text
    assert bad.json()["field"] == "tag_alias."
