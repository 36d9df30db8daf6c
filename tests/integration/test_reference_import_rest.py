"""POST /api/memories/import takes the reference product's version 1 JSON export: a dry run
reports and writes nothing, the import brings every kind of object across with its ids and
times, each memory is found by a word of its own, and a second import changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from exocortex.testing import reference
from exocortex.testing.wait import until_async

SECTIONS = (
    "memories",
    "entities",
    "memory_entities",
    "entity_relationships",
    "memory_links",
    "contradictions",
    "goals",
    "goal_milestones",
    "goal_links",
)


async def _export(api: httpx.AsyncClient, namespace: str) -> dict[str, Any]:
    reply = await api.get("/api/export", params={"namespace": namespace})
    assert reply.status_code == 200, reply.text
    document: dict[str, Any] = reply.json()
    document.pop("exported_at")
    return document


async def _import(
    api: httpx.AsyncClient, document: dict[str, Any], namespace: str, *, dry_run: bool = False
) -> dict[str, Any]:
    reply = await api.post(
        "/api/memories/import",
        params={"namespace": namespace, "dry_run": dry_run},
        json=document,
        timeout=600,
    )
    assert reply.status_code == 200, reply.text
    report: dict[str, Any] = reply.json()
    return report


@pytest_asyncio.fixture
async def settings_kept(api: httpx.AsyncClient) -> AsyncIterator[None]:
    """The reference's changed setting is applied to the shared stack: put back afterwards."""
    key = reference.Reference.changed_setting[0]
    before = (await api.get("/api/settings")).json()[key]
    yield
    reply = await api.patch("/api/settings", json={key: before})
    assert reply.status_code == 200, reply.text


@pytest.mark.usefixtures("settings_kept")
async def test_a_reference_export_comes_across_over_rest_and_a_second_import_changes_nothing(
    api: httpx.AsyncClient, namespace: str, tmp_path: Path
) -> None:
    ref = reference.build(tmp_path / "exocortex.db")
    document = ref.export_v1()
    expected = {s: ref.counts[s] for s in SECTIONS}

    dry = await _import(api, document, namespace, dry_run=True)
    assert dry["dry_run"] is True
    assert dry["sections"]["memories"]["created"] == ref.counts["memories"]
    assert len((await _export(api, namespace))["memories"]) == 0

    report = await _import(api, document, namespace)
    assert report["sections"]["memories"]["created"] == ref.counts["memories"], report["items"]
    assert any(x["kind"] == "settings" and "ai.*" in x["reason"] for x in report["left_out"])
    key, value = ref.changed_setting
    assert (await api.get("/api/settings")).json()[key] == value
    after = await _export(api, namespace)
    assert {s: len(after[s]) for s in SECTIONS} == expected
    memories = {m["id"]: m for m in after["memories"]}
    assert set(memories) == set(ref.tokens)
    for memory_id, created in ref.created_at.items():
        assert memories[memory_id]["created_at"][:23] == created.replace(" ", "T")[:23]
    assert memories[ref.archived_id]["is_active"] is False
    for source, summary in ref.consolidated.items():
        assert memories[source]["consolidated_into"] == summary
    for memory_id, token in ref.tokens.items():
        if memory_id not in ref.active:
            continue
        wanted = {memory_id, memories[memory_id].get("parent_id")}

        async def found(token: str = token, wanted: set[str | None] = wanted) -> set[Any]:
            reply = await api.post(
                "/api/memories/search",
                json={"query": token, "namespace": namespace, "limit": 5, "compact": True},
            )
            assert reply.status_code == 200, reply.text
            return wanted & {r["id"] for r in reply.json()["results"]}

        # The indexes follow the committed rows: awaited, generously on a loaded machine.
        await until_async(found, what=f"{memory_id} found by {token}", seconds=300, interval=0.5)

    again = await _import(api, document, namespace)
    assert all(s["created"] == 0 for s in again["sections"].values()), again["sections"]
    assert await _export(api, namespace) == after


async def test_a_reference_export_that_is_not_one_is_refused_with_a_400(
    api: httpx.AsyncClient, namespace: str
) -> None:
    reply = await api.post(
        "/api/memories/import",
        params={"namespace": namespace},
        json={"version": 1, "memories": [], "entities": "not a list"},
    )
    assert reply.status_code == 400, reply.text
    assert "entities must be a list" in reply.text
    assert len((await _export(api, namespace))["memories"]) == 0
