"""The original tools' contract where agents' prompts depend on it: the words a reply uses and
what a tool stores, through the SDK's client against the real stack."""

from __future__ import annotations

import re

import httpx
import pytest
from mcp import Client

from exocortex.testing.rest import wait_enriched

from .conftest import call, call_error

pytestmark = pytest.mark.integration


async def store(mcp: Client, namespace: str, content: str, **extra: object) -> str:
    data, _ = await call(mcp, "memory_store", content=content, namespace=namespace, **extra)
    return str(data["id"])


async def test_an_identical_store_says_duplicate(mcp: Client, namespace: str) -> None:
    content = "The release train leaves every second Tuesday at noon."
    first = await store(mcp, namespace, content)
    again, text = await call(mcp, "memory_store", content=content, namespace=namespace)
    assert again["id"] == first
    assert f"duplicate: dedup reused {first} — 100% similar" in text


async def test_an_update_without_fields_says_no_update_fields(mcp: Client, namespace: str) -> None:
    memory_id = await store(mcp, namespace, "The cache TTL is five minutes.")
    message = await call_error(mcp, "memory_update", id=memory_id)
    assert "No update fields provided" in message


async def test_a_packed_search_states_its_tokens_in_the_header(mcp: Client, namespace: str) -> None:
    for i in range(4):
        await store(mcp, namespace, f"Release note {i}: " + "the ingest pipeline got faster. " * 6)
    _, text = await call(
        mcp, "memory_search", query="ingest pipeline release", max_tokens=300, namespace=namespace
    )
    header, *lines = text.splitlines()
    found = re.fullmatch(r"Found (\d+) memories \((\w+), ~(\d+) tokens\):", header)
    assert found, header
    # The count is what the listed results take, a quarter of their characters.
    assert int(found.group(3)) == sum(-(-len(line) // 4) for line in lines)
    assert int(found.group(3)) <= 300
    # Without a budget the header stays the original's.
    _, plain = await call(mcp, "memory_search", query="ingest pipeline", namespace=namespace)
    assert re.match(r"Found \d+ memories \(\w+\):$", plain.splitlines()[0])


async def test_entities_show_their_relationships(
    mcp: Client, api: httpx.AsyncClient, namespace: str
) -> None:
    memory_id = await store(mcp, namespace, "The Atlas project uses PostgreSQL for order storage.")
    await wait_enriched(api, memory_id)  # entities are extracted beside the write path
    out, text = await call(mcp, "memory_entities", namespace=namespace)
    atlas = next(e for e in out["entities"] if e["name"] == "Atlas")
    assert [(r["relationship"], r["target"]) for r in atlas["relationships"]] == [
        ("uses", "PostgreSQL")
    ]
    assert "    uses → PostgreSQL (for order storage)" in text.splitlines()


async def test_evolution_notes_which_memory_superseded_which(mcp: Client, namespace: str) -> None:
    old = await store(mcp, namespace, "Vector index: we run pgvector inside Postgres.")
    new = await store(mcp, namespace, "Vector index: we moved from pgvector to Qdrant Edge.")
    await call(mcp, "memory_link", source_id=new, target_id=old, link_type="supersedes")
    out, text = await call(
        mcp, "memory_timeline", mode="evolution", topic="vector index", namespace=namespace
    )
    assert [m["id"] for m in out["memories"]] == [old, new]
    lines = text.splitlines()
    assert lines[lines.index(next(x for x in lines if x.startswith(f"[{old}]"))) + 1] == (
        f"    superseded by {new}"
    )
    assert lines[lines.index(next(x for x in lines if x.startswith(f"[{new}]"))) + 1] == (
        f"    supersedes {old}"
    )


async def test_goal_progress_is_tagged_and_milestones_count_from_one(
    mcp: Client, namespace: str
) -> None:
    created, _ = await call(mcp, "goal_create", title="Ship the importer", namespace=namespace)
    goal_id = created["goal"]["id"]
    await call(mcp, "goal_add_milestone", id=goal_id, title="Parse the files")
    added, _ = await call(mcp, "goal_add_milestone", id=goal_id, title="Store the items")
    assert [m["order"] for m in added["goal"]["milestones"]] == [1, 2]

    logged, _ = await call(mcp, "goal_log", id=goal_id, content="Parser handles front matter.")
    got, _ = await call(mcp, "memory_get", ids=[logged["memory_id"]])
    assert "goal-progress" in got["memories"][0]["tags"]
