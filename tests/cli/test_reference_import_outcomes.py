"""``exo import`` of the reference product's database on the real stack: its ``ai.*``
settings (the LLM provider and key) are applied only when asked with ``--with-api-key``; a
memory whose content is already here under another id is merged (the id here kept, nothing
stored twice), again on a second run; and an import killed midway is finished by running it
again, with every row once."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psycopg

from exocortex.core.domain.secrets import mask_value
from exocortex.testing import reference
from exocortex.testing.settings import ApplySettings
from exocortex.testing.wait import until_async

if TYPE_CHECKING:
    from conftest import Exo

Db = psycopg.AsyncConnection[dict[str, Any]]

# The LLM settings a person keeps in the reference (its settings page edits these three).
REFERENCE_AI_SETTINGS = {
    "ai.provider": "openai",
    "ai.model": "gpt-4o-mini",
    "ai.api_key": reference.API_KEY,
}


def _set_reference_settings(path: Path, values: dict[str, str]) -> None:
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", list(values.items()))
    conn.close()


def _clear_reference_settings(path: Path) -> None:
    """So the import changes none of the shared stack's settings."""
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM settings")
    conn.close()


async def _import(exo: Exo, *args: str) -> dict[str, Any]:
    # The command blocks (its own HTTP client and threads): off the test's event loop.
    report: dict[str, Any] = await asyncio.to_thread(exo.json, "import", *args)
    return report


async def _settings(api: httpx.AsyncClient) -> dict[str, str]:
    reply = await api.get("/api/settings")
    assert reply.status_code == 200, reply.text
    settings: dict[str, str] = reply.json()
    return settings


async def _memories(api: httpx.AsyncClient, namespace: str) -> list[dict[str, Any]]:
    """The namespace's memories once enrichment is done with them: it writes a memory (status,
    keywords, version) a moment after the store or import that made it pending, and a snapshot
    taken before that would differ from one taken after for no fault of the import."""

    async def exported() -> list[dict[str, Any]]:
        reply = await api.get("/api/export", params={"namespace": namespace})
        assert reply.status_code == 200, reply.text
        memories: list[dict[str, Any]] = reply.json()["memories"]
        return memories

    return await until_async(
        exported,
        what="every memory of the namespace enriched",
        accept=lambda memories: all(m["enrichment_status"] != "pending" for m in memories),
    )


async def test_the_reference_llm_settings_are_applied_only_with_with_api_key(
    exo: Exo,
    namespace: str,
    tmp_path: Path,
    api: httpx.AsyncClient,
    change_settings: ApplySettings,
) -> None:
    before = await _settings(api)
    # Put back afterwards whatever the imports change: recorded here as they are now. The
    # stack holds no LLM key (one masked in reads could not be put back).
    assert not before.get("ai.api_key"), "the stack under test holds an LLM key"
    kept = [*REFERENCE_AI_SETTINGS, reference.Reference.changed_setting[0]]
    await change_settings({key: str(before.get(key, "")) for key in kept})
    assert all(before.get(k, "") != v for k, v in REFERENCE_AI_SETTINGS.items())
    ref = reference.build(tmp_path / "exocortex.db")
    _set_reference_settings(ref.path, REFERENCE_AI_SETTINGS)

    without = await _import(exo, str(ref.path), "-n", namespace)
    assert without["ai_settings_applied"] == []
    kept_back = [x for x in without["left_out"] if "--with-api-key" in x["reason"]]
    assert len(kept_back) == 1, without["left_out"]
    assert all(key in kept_back[0]["reason"] for key in REFERENCE_AI_SETTINGS)
    unchanged = await _settings(api)
    assert {k: unchanged.get(k, "") for k in REFERENCE_AI_SETTINGS} == {
        k: before.get(k, "") for k in REFERENCE_AI_SETTINGS
    }

    with_key = await _import(exo, str(ref.path), "-n", namespace, "--with-api-key")
    assert with_key["ai_settings_applied"] == sorted(REFERENCE_AI_SETTINGS)
    assert not [x for x in with_key["left_out"] if "--with-api-key" in x["reason"]]
    applied = await _settings(api)
    assert applied["ai.provider"] == REFERENCE_AI_SETTINGS["ai.provider"]
    assert applied["ai.model"] == REFERENCE_AI_SETTINGS["ai.model"]
    # The key is stored, and shown masked: read back as the mask of the reference's key.
    assert applied["ai.api_key"] == mask_value(reference.API_KEY)
    assert reference.API_KEY not in json.dumps(applied)
    assert reference.API_KEY not in json.dumps(with_key)


async def test_a_memory_whose_content_is_here_under_another_id_is_merged_once(
    exo: Exo, namespace: str, tmp_path: Path, api: httpx.AsyncClient
) -> None:
    ref = reference.build(tmp_path / "exocortex.db", extra_memories=1)
    _clear_reference_settings(ref.path)
    # The extra memory: active, a root, and nothing in the reference refers to it.
    with sqlite3.connect(ref.path) as conn:
        twin_id, content = conn.execute(
            "SELECT id, content FROM memories WHERE content LIKE 'Note 0:%'"
        ).fetchone()
    conn.close()
    stored = await api.post("/api/memories", json={"content": content, "namespace": namespace})
    assert stored.status_code == 201, stored.text
    here_id = stored.json()["id"]
    assert here_id != twin_id

    first = await _import(exo, str(ref.path), "-n", namespace)
    others = ref.counts["memories"] - 1
    assert first["sections"]["memories"] == {"created": others, "merged": 1}, first["reasons"]
    memories = await _memories(api, namespace)
    assert {m["id"] for m in memories} == (set(ref.tokens) - {twin_id}) | {here_id}
    assert [m["id"] for m in memories if m["content"] == content] == [here_id]

    second = await _import(exo, str(ref.path), "-n", namespace)
    assert second["sections"]["memories"] == {"already here": others, "merged": 1}
    assert all("created" not in counts for counts in second["sections"].values()), second[
        "sections"
    ]
    assert await _memories(api, namespace) == memories


async def _stored(db: Db, namespace: str) -> tuple[int, int]:
    """Memories in the namespace, and how many different texts they hold."""
    cur = await db.execute(
        "SELECT count(*) AS n, count(DISTINCT content) AS texts FROM memories WHERE namespace = %s",
        (namespace,),
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["n"]), int(row["texts"])


async def test_an_import_killed_midway_is_finished_by_running_it_again(
    exo: Exo, namespace: str, tmp_path: Path, api: httpx.AsyncClient, stack_db: Db
) -> None:
    ref = reference.build(tmp_path / "exocortex.db", extra_memories=300)
    _clear_reference_settings(ref.path)
    total = ref.counts["memories"]
    # Small parts, one at a time: the import is still under way when the first are stored.
    command = [
        sys.executable,
        "-c",
        "from exocortex.cli.main import app; app()",
        "--url",
        exo.url,
        "import",
        str(ref.path),
        "-n",
        namespace,
        "--batch-size",
        "5",
        "--in-flight",
        "1",
        "--json",
    ]
    running = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:

        async def stored_some() -> int:
            assert running.returncode is None, "the import ended before it was interrupted"
            return (await _stored(stack_db, namespace))[0]

        await until_async(
            stored_some,
            what="the first memories of the import stored",
            seconds=300,
            interval=0.05,
            accept=lambda n: n >= 10,
        )
    finally:
        if running.returncode is None:
            running.kill()
        await running.wait()
    at_kill, _ = await _stored(stack_db, namespace)
    assert 0 < at_kill < total, "the import was not interrupted midway"

    resumed = await _import(exo, str(ref.path), "-n", namespace)
    memories = resumed["sections"]["memories"]
    assert set(memories) <= {"created", "already here"}, resumed["reasons"]
    assert memories.get("already here", 0) >= at_kill
    assert sum(memories.values()) == total
    assert await _stored(stack_db, namespace) == (total, total)
    exported = await api.get("/api/export", params={"namespace": namespace})
    assert exported.status_code == 200, exported.text
    document = exported.json()
    assert {m["id"] for m in document["memories"]} == set(ref.tokens)
    sections = [s for s in ref.counts if s != "memories"]
    assert {s: len(document[s]) for s in sections} == {s: ref.counts[s] for s in sections}

    again = await _import(exo, str(ref.path), "-n", namespace)
    assert all("created" not in counts for counts in again["sections"].values()), again
    assert await _stored(stack_db, namespace) == (total, total)
