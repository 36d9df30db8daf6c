"""Bulk import, markdown ingest and session digests through the real stack."""

from __future__ import annotations

import json
import random
from typing import Any

import httpx

from exocortex.testing.wait import until_async

# Unrelated words across many fields, for texts the model finds unlike one another.
_WORDS = [
    "harbour",
    "violin",
    "glacier",
    "ledger",
    "orchard",
    "turbine",
    "saffron",
    "lantern",
    "cobalt",
    "meadow",
    "parish",
    "telescope",
    "walnut",
    "quarry",
    "sonnet",
    "freight",
    "mosaic",
    "tundra",
    "barrel",
    "kiln",
    "falcon",
    "pharmacy",
    "rudder",
    "velvet",
    "canyon",
    "ballot",
    "spindle",
    "lagoon",
    "anvil",
    "comet",
    "tapestry",
    "vineyard",
    "boulder",
    "chapel",
    "ferment",
    "hazel",
    "jetty",
    "lichen",
    "monsoon",
    "nectar",
    "opal",
    "pylon",
    "quiver",
    "raisin",
    "sextant",
    "thimble",
    "umbrella",
    "vortex",
    "wicker",
    "yarn",
    "zenith",
    "abacus",
    "bison",
    "cactus",
    "dynamo",
    "easel",
    "fjord",
    "gazebo",
    "hammock",
    "igloo",
    "jasmine",
    "kayak",
    "lemur",
    "mantis",
    "nozzle",
    "oyster",
    "pelican",
    "quinoa",
    "radish",
    "scarab",
    "tugboat",
    "urchin",
    "vulture",
    "waffle",
    "xylophone",
    "yodel",
    "zeppelin",
    "almond",
    "buoy",
    "cinder",
    "dune",
    "ember",
    "fossil",
    "gravel",
    "hinge",
    "ivory",
    "juniper",
    "kelp",
    "lobster",
    "marble",
    "nutmeg",
    "otter",
    "pepper",
    "quartz",
    "reef",
    "salmon",
    "tinsel",
    "udder",
    "valve",
    "willow",
    "yacht",
    "zinc",
    "asphalt",
    "beetle",
    "cedar",
    "dagger",
    "eclipse",
    "flannel",
    "garnet",
    "helmet",
    "inkwell",
]

SECTION = "This section carries enough body text to become a memory of its own, clearly. "


async def test_import_reports_per_item_results(api: httpx.AsyncClient, namespace: str) -> None:
    items: list[dict[str, Any]] = [
        {
            "content": f"Imported fact {i}: the hedgehog census counted {i * 13} animals.",
            "namespace": namespace,
        }
        for i in range(40)
    ]
    items.append({"content": items[0]["content"], "namespace": namespace})  # in-batch duplicate
    items.append({"content": "<private>nothing public</private>", "namespace": namespace})
    items.append(
        {"content": "Long import. " + "Paragraph text here. " * 120, "namespace": namespace}
    )
    reply = await api.post("/api/memories/import", json={"memories": items})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["imported"] == 42
    assert body["failed"] == 1
    assert body["errors"][0].startswith("memories.41:")
    results = body["results"]
    # Distinct texts in a new namespace: each is a memory of its own (the long one's chunks
    # are named after the others; their ids once clashed and the batch fell back to
    # deduplicating its items against each other).
    assert [r["dedup_action"] for r in results[:40]] == ["created"] * 40
    assert results[42]["dedup_action"] == "created"
    assert results[40]["dedup_action"] == "skipped"
    assert results[40]["id"] == results[0]["id"]
    assert results[41]["field"] == "memories.41.content"
    first = (await api.get(f"/api/memories/{results[0]['id']}")).json()
    assert first["source"] == "import"
    long_id = results[42]["id"]
    long = (await api.get(f"/api/memories/{long_id}")).json()
    assert long["parent_id"] is None
    again = await api.post("/api/memories/import", json={"memories": items[:5]})
    assert [r["dedup_action"] for r in again.json()["results"]] == ["skipped"] * 5
    search = await api.post(
        "/api/memories/search",
        json={"query": "hedgehog census counted 13 animals", "namespace": namespace},
    )
    assert search.json()["results"]


async def test_an_import_of_several_batches_keeps_order_and_repeats_across_them(
    api: httpx.AsyncClient, namespace: str
) -> None:
    """Ingest embeds the next batch (128 items) while it writes one: a repeat of an item of an
    earlier batch, or of a memory stored before, still comes back as that memory. (The texts
    are too short for semantic dedup, which would fold such alike ones.)"""
    stored = await api.post(
        "/api/memories",
        json={
            "content": "Stored before: the otter holt sits under the willow.",
            "namespace": namespace,
        },
    )
    assert stored.status_code in (200, 201), stored.text
    items: list[dict[str, Any]] = [
        {
            "content": f"Weir gauge {i}: {i * 17} mm.",
            "namespace": namespace,
        }
        for i in range(300)
    ]
    items[150]["content"] = "Stored before: the otter holt sits under the willow."
    items[290]["content"] = items[5]["content"]  # a repeat, two batches later
    items[290]["tags"] = ["gauge-check"]  # what it brings is kept with the first one's memory
    reply = await api.post("/api/memories/import", json={"memories": items})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    results = body["results"]
    assert [r["index"] for r in results] == list(range(300))
    assert (body["imported"], body["failed"]) == (300, 0)
    assert (results[150]["dedup_action"], results[150]["id"]) == ("skipped", stored.json()["id"])
    assert results[290]["dedup_action"] == "skipped"
    assert results[290]["id"] == results[5]["id"]
    first = (await api.get(f"/api/memories/{results[5]['id']}")).json()
    assert "gauge-check" in first["tags"]
    created = [r for r in results if r["dedup_action"] == "created"]
    assert len({r["id"] for r in created}) == len(created) == 298
    found = await api.post(
        "/api/memories/search",
        json={"query": "Weir gauge 289: 4913 mm", "namespace": namespace, "limit": 3},
    )
    assert found.json()["results"][0]["memory"]["id"] == results[289]["id"]


async def test_import_validation(api: httpx.AsyncClient) -> None:
    empty = await api.post("/api/memories/import", json={"memories": []})
    assert empty.status_code == 400
    assert empty.json()["field"] == "memories"
    bad = await api.post(
        "/api/memories/import", json={"memories": [{"content": "x", "importance": 5}]}
    )
    assert bad.status_code == 400
    assert bad.json()["field"] == "memories.0.importance"


async def test_markdown_ingest_splits_and_reingest_replaces(
    api: httpx.AsyncClient, namespace: str
) -> None:
    doc = "notes/notes.md"
    text = (
        f"# Notes\n\nPreamble. {SECTION}\n\n## Alpha\n{SECTION} Alpha owls.\n\n"
        f"## Tiny\nshort\n\n## Beta\n{SECTION} Beta badgers.\n"
    )
    reply = await api.post(
        "/api/memories/ingest",
        json={
            "files": [{"name": doc, "content": text}],
            "namespace": namespace,
            "tags": ["Docs"],
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["stored"] == 3
    assert body["indexed"] is True  # read-your-writes, as for a single store
    file = body["files"][0]
    assert file["name"] == doc
    assert file["sections"] == 3
    memories = [(await api.get(f"/api/memories/{i}")).json() for i in file["memory_ids"]]
    alpha = next(m for m in memories if m["content"].startswith("## Alpha"))
    assert "## Tiny\n\nshort" in alpha["content"]
    assert alpha["content_type"] == "note"
    assert alpha["source_uri"] == doc
    assert "docs" in alpha["tags"]

    revised = f"# Notes\n\nPreamble. {SECTION}\n\n## Alpha\n{SECTION} Alpha owls, revised.\n"
    again = (
        await api.post(
            "/api/memories/ingest",
            json={"files": [{"name": doc, "content": revised}], "namespace": namespace},
        )
    ).json()["files"][0]
    assert again["unchanged"] == 1
    assert again["stored"] == 1
    assert again["replaced"] == 2
    old = (await api.get(f"/api/memories/{alpha['id']}")).json()
    assert old["is_active"] is False
    search = await api.post(
        "/api/memories/search", json={"query": "beta badgers", "namespace": namespace}
    )
    assert all("Beta badgers" not in r["memory"]["content"] for r in search.json()["results"])


async def test_a_long_document_goes_in_whole_in_order_and_a_refused_section_fails_it(
    api: httpx.AsyncClient, namespace: str
) -> None:
    """A document of more sections than one import batch (128): each section a memory, in the
    document's order; a section past the content limit answers 413 and the rest are stored.
    Each section is a seeded draw of unrelated words, so semantic dedup finds no two alike."""
    draw = random.Random(7)
    bodies = [" ".join(draw.sample(_WORDS, 12)) for _ in range(300)]
    sections = [f"## Entry {i}\n{body}" for i, body in enumerate(bodies)]
    reply = await api.post(
        "/api/memories/ingest",
        json={
            "files": [{"name": "gauges.md", "content": "\n\n".join(sections)}],
            "namespace": namespace,
        },
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["stored"] == 300
    assert body["indexed"] is True
    ids = body["files"][0]["memory_ids"]
    assert len(set(ids)) == 300
    for i in (0, 127, 128, 299):
        memory = (await api.get(f"/api/memories/{ids[i]}")).json()
        assert memory["content"] == f"## Entry {i}\n\n{bodies[i]}"
    found = await api.post(
        "/api/memories/search",
        json={"query": bodies[211], "namespace": namespace, "limit": 3},
    )
    assert found.json()["results"][0]["memory"]["id"] == ids[211]

    kept_text = "The sluice opened at dawn and the mill pond drained into the lower channel."
    oversized = f"## Flood log\n{'water rose and fell again ' * 9000}"
    refused = await api.post(
        "/api/memories/ingest",
        json={
            "files": [{"name": "log.md", "content": f"## Kept\n{kept_text}\n\n{oversized}"}],
            "namespace": namespace,
        },
    )
    assert refused.status_code == 413, refused.text  # as its own store would answer
    assert "characters" in refused.json()["detail"]

    # The section before it is committed; the error answer does not wait for its indexing.
    async def best_source() -> str | None:
        kept = await api.post(
            "/api/memories/search",
            json={"query": kept_text, "namespace": namespace, "limit": 1},
        )
        results = kept.json()["results"]
        return results[0]["memory"]["source_uri"] if results else None

    await until_async(
        best_source,
        what="the section stored before the refused one found by its text",
        accept=lambda source: source == "log.md",
    )


async def test_markdown_ingest_of_given_text_and_server_paths_refused(
    api: httpx.AsyncClient, namespace: str
) -> None:
    reply = await api.post(
        "/api/memories/ingest",
        json={
            "files": [
                {"name": "mem://handbook", "content": f"## One\n{SECTION}\n## Two\n{SECTION}2"}
            ],
            "namespace": namespace,
        },
    )
    assert reply.json()["stored"] == 2
    missing = await api.post(
        "/api/memories/ingest", json={"files": [{"path": "/nonexistent/dir/*.md"}]}
    )
    # The server reads no file of its own unless its operator set an import folder.
    assert missing.status_code == 400
    assert missing.json()["field"] == "files.0.path"


def _line(*blocks: dict[str, Any]) -> str:
    return json.dumps({"type": "assistant", "message": {"content": list(blocks)}})


async def test_session_digest_stores_one_summary(api: httpx.AsyncClient, namespace: str) -> None:
    transcript = "\n".join(
        [
            _line({"type": "tool_use", "name": "Read", "input": {"file_path": "/w/kiln/src/a.py"}}),
            _line({"type": "tool_use", "name": "Edit", "input": {"file_path": "/w/kiln/src/a.py"}}),
            _line({"type": "tool_use", "name": "Edit", "input": {"file_path": "/w/kiln/src/a.py"}}),
            _line({"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}}),
            _line({"type": "tool_use", "name": "mcp__exocortex__memory_search", "input": {}}),
            _line({"type": "text", "text": "We decided to cache the kiln temperatures in memory."}),
            "garbage line",
        ]
    )
    reply = await api.post(
        "/api/memories/digest-session",
        json={"transcript": transcript, "namespace": namespace, "agent": "coder"},
    )
    assert reply.status_code == 201, reply.text
    body = reply.json()
    assert body["project"] == "kiln"
    assert body["actions"] == 2
    memory = body["memory"]
    assert memory["content_type"] == "summary"
    assert memory["source"] == "digest"
    assert memory["agent"] == "coder"
    assert {"session-digest", "kiln"} <= set(memory["tags"])
    assert "Edit /w/kiln/src/a.py" in memory["content"]
    assert "memory_search" not in memory["content"]
    assert "Read" not in memory["content"]
    empty = await api.post("/api/memories/digest-session", json={"transcript": "{}"})
    assert empty.status_code == 400
    assert empty.json()["field"] == "transcript"
