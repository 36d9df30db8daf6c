"""Every tool through the SDK's own client, in-process, against the real stack.

Each test works in its own namespace on the session's stack. A tool whose REST route the gateway
does not serve fails with the adapter's own error message (see ``conftest.call``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client
from mcp.types import CallToolResult

from exocortex.mcp.server import create_server
from exocortex.mcp.settings import McpSettings

from .conftest import UNSUPPORTED, call, call_error, text_of

pytestmark = pytest.mark.integration

TOOLS = {
    "memory_store",
    "memory_search",
    "memory_get",
    "memory_update",
    "memory_forget",
    "memory_context",
    "memory_browse",
    "memory_feedback",
    "memory_entities",
    "memory_timeline",
    "memory_ingest",
    "memory_link",
    "memory_digest_session",
    "memory_diff",
    "memory_project_snapshot",
    "memory_ping",
    "goal_create",
    "goal_list",
    "goal_get",
    "goal_update",
    "goal_log",
    "goal_add_milestone",
    "goal_update_milestone",
    "goal_remove_milestone",
    "memory_maintenance",
    "memory_consolidate",
    "memory_contradictions",
    "memory_tag_cleanup",
    "memory_decay_preview",
    "memory_graph",
}


async def store(mcp: Client, namespace: str, content: str, **extra: object) -> str:
    data, _ = await call(mcp, "memory_store", content=content, namespace=namespace, **extra)
    return str(data["id"])


async def test_the_tool_list_is_complete_short_and_typed(mcp: Client) -> None:
    tools = (await mcp.list_tools()).tools
    assert {t.name for t in tools} == TOOLS
    for tool in tools:
        assert tool.description, tool.name
        assert len(tool.description) <= 160, tool.name
        assert tool.output_schema is not None, tool.name
        # Compacted: no per-property "title" keyword (a parameter may be *named* title).
        assert '"title": "' not in json.dumps(tool.input_schema), tool.name


async def test_store_search_get_round_trip(mcp: Client, namespace: str) -> None:
    empty, text = await call(mcp, "memory_search", query="message broker", namespace=namespace)
    assert empty["count"] == 0
    assert text == "No memories found matching the query."
    empty, text = await call(mcp, "memory_context", topic="message broker", namespace=namespace)
    assert empty["count"] == 0
    assert text == 'Context for "message broker": no memories found.'

    stored, text = await call(
        mcp,
        "memory_store",
        content="We chose NATS JetStream for domain events because it is light and durable.",
        tags=["Architecture"],
        content_type="decision",
        importance=0.8,
        namespace=namespace,
    )
    first = stored["id"]
    assert text.startswith(f"Stored memory (id: {first} | tags: architecture")  # + auto tags
    assert text.endswith(")")
    await store(mcp, namespace, "The dashboard uses a dark theme with teal accents.")

    found, text = await call(
        mcp, "memory_search", query="which message broker?", namespace=namespace
    )
    assert found["results"][0]["id"] == first
    assert found["mode"] in {"rrf", "legacy"}
    assert text.startswith(f"Found {found['count']} memories ({found['mode']}):\n[{first}] ")
    assert "JetStream" in text

    fetched, text = await call(mcp, "memory_get", ids=[first, "01NOSUCHMEMORY0000000000000"])
    assert [m["id"] for m in fetched["memories"]] == [first]
    memory = fetched["memories"][0]
    assert "architecture" in memory["tags"]
    assert memory["agent"] == "pytest"  # attribution from the adapter's defaults
    assert memory["source"] == "mcp"
    assert fetched["missing"] == ["01NOSUCHMEMORY0000000000000"]
    assert text.endswith("\n[01NOSUCHMEMORY0000000000000] Not found")


async def test_store_twice_reports_the_duplicate(mcp: Client, namespace: str) -> None:
    content = "Postgres is the single source of truth; the indexes are projections."
    first = await store(mcp, namespace, content)
    again, text = await call(mcp, "memory_store", content=content, namespace=namespace)
    assert again["id"] == first
    assert again["dedup_action"] == "skipped"
    assert text.startswith(f"Stored memory (id: {first} | duplicate: dedup reused {first}")


async def test_search_without_a_namespace_spans_every_namespace(
    mcp: Client, namespace: str
) -> None:
    here = await store(mcp, namespace, "The zorblatt exporter writes hourly snapshots.")
    there = await store(mcp, f"{namespace}-two", "The zorblatt exporter skips empty snapshots.")
    data, _ = await call(mcp, "memory_search", query="zorblatt exporter snapshots", limit=20)
    assert {here, there} <= {r["id"] for r in data["results"]}
    data, _ = await call(
        mcp, "memory_search", query="zorblatt exporter snapshots", namespace=namespace
    )
    found = {r["id"] for r in data["results"]}
    assert here in found
    assert there not in found


async def test_search_compact_and_token_budget(mcp: Client, namespace: str) -> None:
    topics = [
        "A Rust rewrite of the tokenizer cut CPU use by half in the batch workers.",
        "The Kafka connector was retired after the migration to object storage.",
        "Swedish and Finnish documents now pass through a language detector first.",
        "PDF attachments over fifty megabytes are rejected with a clear message.",
        "Nightly backfills moved from cron to the scheduler, with retries and alerts.",
        "A leak in the image thumbnailer was traced to an unclosed file handle.",
    ]
    for i, topic in enumerate(topics):
        data, _ = await call(
            mcp,
            "memory_store",
            content=f"Ingest pipeline release {i}: " + " ".join([topic] * 8),
            namespace=namespace,
        )
        assert data["dedup_action"] == "created"
    compact, _ = await call(
        mcp, "memory_search", query="ingest pipeline release", compact=True, namespace=namespace
    )
    assert compact["count"] == 6
    assert all(len(r["text"]) <= 200 for r in compact["results"])

    packed, _ = await call(
        mcp, "memory_search", query="ingest pipeline release", max_tokens=300, namespace=namespace
    )
    # Each result is ~180 tokens: the budget holds one or two, never all six.
    assert 1 <= packed["count"] < 6


async def test_linked_memories_come_back_with_a_search(mcp: Client, namespace: str) -> None:
    seed = await store(mcp, namespace, "The billing service retries webhooks with backoff.")
    other = await store(mcp, namespace, "Stripe signs payloads; verify the signature header.")
    linked, text = await call(
        mcp, "memory_link", source_id=seed, target_id=other, link_type="elaborates", strength=0.9
    )
    assert linked["removed"] is False
    assert "elaborates" in text

    found, text = await call(
        mcp, "memory_search", query="billing webhooks retries", limit=1, namespace=namespace
    )
    assert found["results"][0]["id"] == seed
    assert [x["id"] for x in found["linked"]] == [other]
    assert text.startswith(f"Found 1 memories ({found['mode']}):\n[{seed}] ")
    assert "Linked (1-hop)" in text

    context, text = await call(mcp, "memory_context", topic="billing webhooks", namespace=namespace)
    assert seed in {r["id"] for r in context["results"]} | {x["id"] for x in context["linked"]}
    assert text.startswith(f'Context for "billing webhooks" ({context["count"]} memories):\n')

    removed, _ = await call(mcp, "memory_link", source_id=seed, target_id=other, remove=True)
    assert removed["removed"] is True


async def test_benchmark_data_is_stored_as_a_metadata_memory(mcp: Client, namespace: str) -> None:
    memory_id = await store(mcp, namespace, "Benchmark run 14: 512 stores.", benchmark=True)
    fetched, _ = await call(mcp, "memory_get", ids=[memory_id])
    assert fetched["memories"][0]["importance"] == 0.15  # a metadata memory's importance


async def test_update_and_forget(mcp: Client, namespace: str) -> None:
    memory_id = await store(mcp, namespace, "The cache TTL is five minutes.")
    updated, text = await call(
        mcp, "memory_update", id=memory_id, tags=["cache", "config"], importance=0.9
    )
    assert updated["memory"]["tags"] == ["cache", "config"]
    assert updated["memory"]["importance"] == 0.9
    assert text.startswith(f'Updated memory {memory_id}: "The cache TTL is five minutes." (')
    assert "tags: cache, config | importance 0.9" in text
    # Attribution alone is an update too.
    reattributed, _ = await call(mcp, "memory_update", id=memory_id, agent="reviewer")
    assert reattributed["memory"]["agent"] == "reviewer"

    archived, text = await call(mcp, "memory_forget", id=memory_id, archive=True)
    assert archived["deleted"] is False
    assert text == f"Archived memory {memory_id}"
    fetched, _ = await call(mcp, "memory_get", ids=[memory_id])
    assert fetched["memories"][0]["is_active"] is False

    deleted, text = await call(mcp, "memory_forget", id=memory_id)
    assert deleted["deleted"] is True
    assert text == f'Deleted memory {memory_id}: "The cache TTL is five minutes."'
    gone, text = await call(mcp, "memory_get", ids=[memory_id])
    assert gone["missing"] == [memory_id]
    assert text == f"[{memory_id}] Not found"

    again = await call_error(mcp, "memory_forget", id=memory_id)
    assert f"Memory {memory_id} not found." in again


async def test_feedback_counts_known_ids_only(mcp: Client, namespace: str) -> None:
    memory_id = await store(mcp, namespace, "Feedback target memory about the deploy checklist.")
    out, text = await call(mcp, "memory_feedback", ids=[memory_id, "01UNKNOWN000000000000000000"])
    assert out["recorded"] == [memory_id]
    assert out["missing"] == ["01UNKNOWN000000000000000000"]
    assert text == (
        "Recorded usefulness signal for 1 memories."
        " Unknown ids (not counted): 01UNKNOWN000000000000000000"
    )


async def test_browse_and_diff(mcp: Client, namespace: str) -> None:
    since = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()
    tagged = await store(mcp, namespace, "Browse me: the on-call rota.", tags=["ops"])
    await store(mcp, namespace, "An untagged memory about lunch.")

    browsed, text = await call(mcp, "memory_browse", tags=["ops"], namespace=namespace)
    assert [r["id"] for r in browsed["results"]] == [tagged]
    assert "on-call rota" in text

    everything, _ = await call(mcp, "memory_browse", namespace=namespace, compact=True)
    assert everything["count"] == 2

    diff, text = await call(mcp, "memory_diff", since=since, namespace=namespace)
    assert tagged in {h["id"] for h in diff["created"]}
    assert "## Created (2)" in text


async def test_timeline_modes(mcp: Client, namespace: str) -> None:
    decision = await store(
        mcp,
        namespace,
        "Decision: we use Qdrant Edge for the embedded vector index.",
        tags=["decision", "storage"],
    )
    await store(mcp, namespace, "A note on vector index quantisation.")
    decisions, _ = await call(mcp, "memory_timeline", mode="decisions", namespace=namespace)
    assert [m["id"] for m in decisions["memories"]] == [decision]
    filtered, _ = await call(
        mcp, "memory_timeline", mode="decisions", tags=["unrelated"], namespace=namespace
    )
    assert filtered["memories"] == []

    evolution, _ = await call(
        mcp, "memory_timeline", mode="evolution", topic="vector index", namespace=namespace
    )
    stamps = [m["created_at"] for m in evolution["memories"]]
    assert len(stamps) == 2
    assert stamps == sorted(stamps)

    lineage, _ = await call(mcp, "memory_timeline", mode="lineage", memory_id=decision)
    assert [m["id"] for m in lineage["memories"]] == [decision]

    epoch = await store(
        mcp, namespace, "This month: the storage layer was rebuilt.", tags=["epoch"]
    )
    month = datetime.now(UTC).strftime("%Y-%m")
    tree, text = await call(
        mcp, "memory_timeline", mode="hierarchy", month=month, namespace=namespace
    )
    assert tree["count"] == 1
    assert tree["hierarchy"]["epochs"][0]["id"] == epoch
    assert "storage layer was rebuilt" in text

    message = await call_error(mcp, "memory_timeline", mode="evolution")
    assert "topic" in message


async def test_entities_lists_what_enrichment_found(mcp: Client, namespace: str) -> None:
    await store(mcp, namespace, "Kubernetes runs the Exocortex gateway behind Traefik.")
    out, text = await call(mcp, "memory_entities", namespace=namespace)
    assert out["count"] == len(out["entities"])
    assert text


async def test_ingest_markdown_and_reingest(mcp: Client, namespace: str, tmp_path: Path) -> None:
    doc = tmp_path / "runbook.md"
    doc.write_text(
        "# Runbook\n\n## Restarting the gateway\n"
        + "Run `exo up` again; the data directory is kept between restarts. " * 3
        + "\n\n## Rotating keys\n"
        + "Add the new key to EXO_API_KEYS, roll the clients, then drop the old key. " * 3
        + "\n"
    )
    out, text = await call(mcp, "memory_ingest", path=str(tmp_path / "*.md"), namespace=namespace)
    assert out["stored"] >= 2
    # The local (stdio) adapter reads the user's file and sends its content, named by its path.
    assert out["files"][0]["name"] == str(doc.resolve())
    assert "runbook.md" in text
    assert out["indexed"] is True  # searchable as soon as the call returns
    found, _ = await call(mcp, "memory_search", query="rotating keys", namespace=namespace)
    assert any("EXO_API_KEYS" in r["text"] for r in found["results"])

    again, _ = await call(mcp, "memory_ingest", path=str(doc), namespace=namespace)
    assert again["stored"] + sum(f["unchanged"] for f in again["files"]) >= 2

    missing = await call_error(mcp, "memory_ingest", path=str(tmp_path / "nope.md"))
    assert "no such file" in missing

    sent, _ = await call(
        mcp,
        "memory_ingest",
        files=[
            {"name": "mem://faq", "content": "## Ports\n" + "The gateway listens on 3210. " * 4}
        ],
        namespace=namespace,
    )
    assert sent["files"][0]["name"] == "mem://faq"
    assert sent["stored"] == 1


async def test_digest_session_stores_a_summary(mcp: Client, namespace: str, tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    lines = [
        {
            "type": "assistant",
            "message": {
                "content": [
                    {
                        "type": "tool_use",
                        "name": "Edit",
                        "input": {"file_path": "/src/shop/cart.py"},
                    },
                    {"type": "tool_use", "name": "Bash", "input": {"command": "pytest -q"}},
                    {"type": "tool_use", "name": "Read", "input": {"file_path": "/src/shop/x.py"}},
                ]
            },
        }
    ]
    transcript.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    out, text = await call(
        mcp, "memory_digest_session", transcript_path=str(transcript), namespace=namespace
    )
    assert out["id"]
    assert out["commands"] == 1
    assert "session summary" in text
    sent, _ = await call(
        mcp,
        "memory_digest_session",
        transcript=transcript.read_text(),
        namespace=f"{namespace}-sent",
    )
    assert sent["commands"] == 1


async def test_project_snapshot(mcp: Client, namespace: str) -> None:
    await store(mcp, namespace, "Project zephyr: the importer now streams CSV rows.")
    decided = await store(mcp, namespace, "Zephyr decision: parse dates as UTC.", tags=["decision"])
    out, text = await call(
        mcp, "memory_project_snapshot", cwd="/home/me/code/zephyr", namespace=namespace
    )
    assert out["project"] == "zephyr"
    assert out["recent"]
    assert [h["id"] for h in out["decisions"]] == [decided]
    assert out["open_threads"] == []
    assert text.startswith("# Project snapshot: zephyr")
    assert f"## Decisions\n- [{decided}]" in text
    message = await call_error(mcp, "memory_project_snapshot")
    assert "project" in message


async def test_ping(mcp: Client) -> None:
    out, text = await call(mcp, "memory_ping")
    assert out["status"] in {"ok", "degraded"}
    assert "Exocortex" in text
    # memory_ping tolerates a server without GET /api/ping; this one has it, so counts are there.
    assert UNSUPPORTED not in text, text
    assert "active memories" in text
    assert isinstance(out.get("active"), int)


async def test_goals_and_milestones(mcp: Client, namespace: str) -> None:
    created, text = await call(
        mcp, "goal_create", title="Ship the MCP adapter", priority="high", namespace=namespace
    )
    goal_id = created["goal"]["id"]
    assert created["goal"]["priority"] == "high"
    assert goal_id in text

    listed, _ = await call(mcp, "goal_list", namespace=namespace)
    assert [g["id"] for g in listed["goals"]] == [goal_id]

    added, _ = await call(mcp, "goal_add_milestone", id=goal_id, title="Tools list")
    await call(mcp, "goal_add_milestone", id=goal_id, title="Transports")
    titles = [m["title"] for m in added["goal"]["milestones"]]
    assert titles == ["Tools list"]
    milestone_id = added["goal"]["milestones"][0]["id"]

    done, text = await call(
        mcp, "goal_update_milestone", goal_id=goal_id, milestone_id=milestone_id, status="completed"
    )
    assert done["goal"]["milestones"][0]["status"] == "completed"
    assert "[x] Tools list" in text

    logged, _ = await call(mcp, "goal_log", id=goal_id, content="All tools answer over stdio.")
    assert logged["memory_id"]

    fetched, text = await call(mcp, "goal_get", id=goal_id)
    assert [m["title"] for m in fetched["goal"]["milestones"]] == ["Tools list", "Transports"]
    assert "All tools answer over stdio." in text

    removed, _ = await call(
        mcp, "goal_remove_milestone", goal_id=goal_id, milestone_id=milestone_id
    )
    assert [m["title"] for m in removed["goal"]["milestones"]] == ["Transports"]

    updated, _ = await call(mcp, "goal_update", id=goal_id, status="completed")
    assert updated["goal"]["status"] == "completed"
    assert updated["goal"]["completed_at"]


async def test_bad_input_is_a_tool_error_not_a_crash(mcp: Client, namespace: str) -> None:
    assert "query" in await call_error(mcp, "memory_search", query="   ", namespace=namespace)
    assert "limit" in await call_error(mcp, "memory_search", query="x", limit="many")
    assert "importance" in await call_error(mcp, "memory_store", content="x", importance=7)
    assert "No update fields provided" in await call_error(mcp, "memory_update", id="01ABC")
    assert "not an id" in await call_error(mcp, "memory_forget", id="../../etc")
    unknown = await call_error(mcp, "memory_update", id="01NOSUCH0000000000000000000", tags=["x"])
    assert "Memory 01NOSUCH0000000000000000000 not found." in unknown
    unknown = await call_error(mcp, "memory_forget", id="01NOSUCH0000000000000000000")
    assert "Memory 01NOSUCH0000000000000000000 not found." in unknown
    unknown = await call_error(mcp, "memory_forget", id="01NOSUCH0000000000000000000", archive=True)
    assert "Memory 01NOSUCH0000000000000000000 not found." in unknown
    # The server is still answering.
    await call(mcp, "memory_ping")


async def test_an_unreachable_gateway_is_a_clear_tool_error() -> None:
    server = create_server(McpSettings(gateway_url="http://127.0.0.1:9", timeout_seconds=2))
    async with Client(server) as client:
        result = await client.call_tool("memory_search", {"query": "anything"})
    assert isinstance(result, CallToolResult)
    assert result.is_error
    assert "cannot reach the Exocortex gateway" in text_of(result)
