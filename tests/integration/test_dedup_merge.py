"""Dedup merge mode through the real stack: a close-but-not-duplicate store is appended to the
memory it resembles (``dedup.merge_enabled``), and nothing is lost when merges race."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import psycopg

from exocortex.core.domain.text import content_hash
from exocortex.core.runtime.stack import Stack
from exocortex.testing.rest import stored
from exocortex.testing.settings import patched_settings

SEPARATOR = "\n\n---\n\n"
# Pairs measured with the bundled model at cosine ~0.78-0.80: between dedup.merge_threshold
# (0.75) and dedup.similarity_threshold (0.85).
STAGING = "The staging cluster runs three nodes in the Frankfurt region for now."
STAGING_MORE = "The staging cluster in Frankfurt was extended with a fourth node for load tests."
PROFILE = "The mobile app caches the user profile for one hour before fetching it again."
PROFILE_MORE = [
    "The mobile app keeps the user profile in a local cache and refetches it on login.",
    "Profile data in the mobile app is cached locally; avatars are cached for a day.",
]
BACKUP = "The backup job copies the Postgres database to object storage every night at two."
BACKUP_MORE = "Every night the Postgres backup job also verifies the previous night's dump."
# Over 0.85: a duplicate, merge mode or not.
KETTLE = "The office kettle lives in the left cupboard above the sink."
KETTLE_AGAIN = "The office kettle is kept in the cupboard on the left, above the kitchen sink."


def _rows(stack: Stack, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(stack.database_url) as conn:
        return conn.execute(sql, params).fetchall()


async def test_merge_is_off_by_default(api: httpx.AsyncClient, namespace: str) -> None:
    settings = (await api.get("/api/settings")).json()
    assert (settings["dedup.merge_enabled"], settings["dedup.merge_threshold"]) == (
        "false",
        "0.75",
    )
    first = await stored(api, content=STAGING, namespace=namespace, tags=["infra"])
    second = await stored(api, content=STAGING_MORE, namespace=namespace, tags=["infra"])
    assert second["dedup_action"] == "created"
    assert second["id"] != first["id"]


async def test_merge_mode_appends_races_safely_and_keeps_duplicates_skipped(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    async with patched_settings(api, exo_stack.nats_url, {"dedup.merge_enabled": "true"}):
        target = await stored(
            api, content=STAGING, namespace=namespace, tags=["infra"], importance=0.4
        )
        merged = await stored(
            api,
            content=STAGING_MORE,
            namespace=namespace,
            tags=["infra", "capacity"],
            importance=0.7,
            metadata={"ticket": "OPS-7"},
        )
        assert merged["dedup_action"] == "merged"
        assert merged["id"] == target["id"]
        assert merged["superseded_id"] == target["id"]
        assert 0.75 <= merged["dedup_similarity"] < 0.85
        assert merged["content"] == STAGING + SEPARATOR + STAGING_MORE
        assert {"infra", "capacity"} <= set(merged["tags"])
        assert merged["importance"] == 0.7
        assert merged["metadata"]["ticket"] == "OPS-7"
        assert merged["version"] > target["version"]
        assert merged["enrichment_status"] == "pending"
        assert merged["indexed"] is True
        digest, has_vector = _rows(
            exo_stack,
            "SELECT content_hash, embedding IS NOT NULL FROM memories WHERE id = %s",
            target["id"],
        )[0]
        assert digest == content_hash(merged["content"])
        assert has_vector
        # The appended text is searchable through the merged memory (new version indexed).
        found = await api.post(
            "/api/memories/search",
            json={"query": "fourth node for load tests", "namespace": namespace},
        )
        assert found.json()["results"][0]["memory"]["id"] == target["id"]
        # Storing the same text again (a retried request) does not append it twice.
        again = await stored(api, content=STAGING_MORE, namespace=namespace, tags=["infra"])
        assert again["id"] == target["id"]
        assert again["dedup_action"] == "skipped"
        assert again["content"].count(STAGING_MORE) == 1

        # Above the duplicate threshold merge mode changes nothing: still the skip path.
        kettle = await stored(api, content=KETTLE, namespace=namespace)
        kettle_again = await stored(api, content=KETTLE_AGAIN, namespace=namespace)
        assert kettle_again["dedup_action"] == "skipped"
        assert kettle_again["content"] == kettle["content"]

        # Two merges into one memory at once: both texts end up in it, each once.
        profile = await stored(api, content=PROFILE, namespace=namespace, tags=["mobile"])
        results = await asyncio.gather(
            *(stored(api, content=t, namespace=namespace, tags=["mobile"]) for t in PROFILE_MORE)
        )
        assert [r["dedup_action"] for r in results] == ["merged", "merged"]
        final = (await api.get(f"/api/memories/{profile['id']}")).json()
        sections = final["content"].split(SEPARATOR)
        assert sections[0] == PROFILE
        assert sorted(sections[1:]) == sorted(PROFILE_MORE)


async def test_merge_rechunks_when_the_text_outgrows_the_chunk_limit(
    api: httpx.AsyncClient, exo_stack: Stack, namespace: str
) -> None:
    async with patched_settings(
        api,
        exo_stack.nats_url,
        {
            "dedup.merge_enabled": "true",
            "chunking.max_length": "150",
            "chunking.target_size": "60",
        },
    ):
        target = await stored(api, content=BACKUP, namespace=namespace, tags=["ops"])
        assert len(BACKUP) <= 150
        merged = await stored(api, content=BACKUP_MORE, namespace=namespace, tags=["ops"])
    assert merged["dedup_action"] == "merged"
    assert merged["id"] == target["id"]
    chunks = _rows(
        exo_stack,
        "SELECT content, embedding IS NOT NULL FROM memories WHERE parent_id = %s "
        "ORDER BY chunk_index",
        target["id"],
    )
    assert len(chunks) >= 2
    assert all(has_vector for _, has_vector in chunks)
    joined = " ".join(" ".join(text.split()) for text, _ in chunks)
    assert joined == " ".join((BACKUP + SEPARATOR + BACKUP_MORE).split())
    parent = _rows(exo_stack, "SELECT embedding FROM memories WHERE id = %s", target["id"])
    assert parent[0][0] is None
    tagged = _rows(
        exo_stack,
        "SELECT count(*) FROM memory_tags t JOIN memories m ON m.id = t.memory_id "
        "WHERE m.parent_id = %s AND t.tag = 'ops'",
        target["id"],
    )
    assert tagged[0][0] == len(chunks)
