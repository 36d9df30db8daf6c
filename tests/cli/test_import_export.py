"""``exo import`` reads files from this computer and sends their content; ``exo export`` writes
a JSON backup, a Markdown file or an Obsidian vault."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from exocortex.testing.wait import until

if TYPE_CHECKING:
    from conftest import Exo

CLAUDE_CODE = [
    {"type": "summary", "summary": "Fixing the flaky test"},
    {"type": "user", "sessionId": "s-42", "timestamp": "2026-11-30T10:00:00Z",
     "message": {"role": "user", "content": "Why does the retry test flake on CI?"}},
    {"type": "assistant", "sessionId": "s-42", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "The retry test sleeps a fixed 50 ms; CI machines are slower."},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "tests/test_retry.py"}}]}},
    {"type": "user", "sessionId": "s-42", "message": {"role": "user", "content": [
        {"type": "tool_result", "content": "file body"}]}},
    {"type": "user", "sessionId": "s-42",
     "message": {"role": "user", "content": "Use a polling wait with a deadline instead."}},
    {"type": "assistant", "sessionId": "s-42",
     "message": {"role": "assistant", "content": "Done: the test polls for up to 5 s."}},
]  # fmt: skip


PAGE = """# Exo

## Storage
Postgres holds the truth: every memory, link and entity lives in one database.

## Events
{events}
"""


def _unboxed(text: str) -> str:
    """A usage error's text without the panel around it (it wraps inside a box)."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _ids_in(exo: Exo, namespace: str) -> list[str]:
    return [m["id"] for m in exo.json("recent", "-n", namespace, "-l", "100")["results"]]


def _enriched(exo: Exo, *memories: dict[str, Any]) -> None:
    """Wait until enrichment is through with each memory (it writes the memory a moment after
    its store: new keywords, a new version)."""
    for memory in memories:
        until(
            lambda memory=memory: exo.json("get", memory["id"])["enrichment_status"],
            what=f"enrichment finished with {memory['id']}",
            accept=lambda status: status == "done",
        )


def test_json_list_import_reports_new_and_duplicate_items(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    source = tmp_path / "notes.json"
    source.write_text(
        json.dumps(
            [
                {"content": "Grafana runs on port 3000", "tags": ["ops"], "importance": 0.6},
                "Prometheus scrapes every 15 s",
                {"content": "Grafana runs on port 3000", "unknown_field": 1},
            ]
        )
    )
    summary = exo.json("import", str(source), "-n", namespace, "-t", "imported")
    assert summary["memories"] == {"created": 2, "skipped": 1}
    assert summary["errors"] == []
    found = exo.json("search", "grafana port", "-n", namespace)["results"][0]["memory"]
    assert found["content"] == "Grafana runs on port 3000"
    assert {"ops", "imported"} <= set(found["tags"])
    assert found["source"] == "import"
    assert found["source_uri"] == str(source.resolve())


def test_batches_in_flight_together_keep_every_item_and_its_place(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    """Several requests at once: each item is counted once, a repeat in another batch comes
    back as a duplicate, and errors name the item's place in the file."""
    items: list[Any] = [f"Lighthouse log {i}: the keeper lit lamp {i * 7}" for i in range(22)]
    # Nothing but private text: refused on the server, item by item.
    items[9] = "<private>the keeper's pin</private>"
    items[17] = {"content": "<private>the boat's code</private>", "tags": ["x"]}
    items.append(items[2])  # the same text as item 2, in another batch
    source = tmp_path / "log.json"
    source.write_text(json.dumps(items))
    result = exo(
        "import", str(source), "-n", namespace, "--batch-size", "4", "--in-flight", "3", "--json"
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # items failed: the exit code says so
    summary = json.loads(result.stdout)
    assert summary["memories"] == {"created": 20, "skipped": 1, "failed": 2}
    assert [e.split(" ", 2)[1] for e in summary["errors"]] == ["9", "17"]
    found = exo.json("search", "keeper lit lamp 14", "-n", namespace)["results"][0]["memory"]
    assert found["content"] == items[2]
    assert len(_ids_in(exo, namespace)) == 20


def test_dry_run_sends_nothing(exo: Exo, namespace: str, tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(["one thing", "another thing"]))
    plan = exo.json("import", str(tmp_path / "a.json"), "-n", namespace, "--dry-run")
    assert plan["memories"] == 2
    assert _ids_in(exo, namespace) == []


def test_markdown_folder_and_glob_import_splits_at_headers_and_reimport_replaces(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    notes = tmp_path / "vault" / "projects"
    notes.mkdir(parents=True)
    page = notes / "exo.md"
    page.write_text(
        PAGE.format(
            events="NATS carries every event between the services, in order, at least once."
        )
    )
    (notes / "skip.png").write_bytes(b"\x89PNG")
    first = exo.json("import", str(tmp_path / "vault" / "**" / "*.md"), "-n", namespace)
    assert first["documents"]["files"] == 1
    assert first["documents"]["stored"] >= 2
    assert len(_ids_in(exo, namespace)) >= 2

    page.write_text(
        PAGE.format(
            events="NATS JetStream carries every event between the services and can replay it."
        )
    )
    again = exo.json("import", str(tmp_path / "vault"), "-n", namespace)
    assert again["documents"]["unchanged"] >= 1
    assert again["documents"]["replaced"] == 1
    hits = exo.json("search", "JetStream", "-n", namespace)["results"]
    assert "JetStream carries every event" in hits[0]["memory"]["content"]


def test_claude_code_transcript_becomes_one_memory_per_exchange(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("\n".join(json.dumps(line) for line in CLAUDE_CODE) + "\n")
    summary = exo.json("import", str(transcript), "-n", namespace)
    assert summary["memories"] == {"created": 2}
    memories = exo.json("recent", "-n", namespace)["results"]
    contents = sorted(m["content"] for m in memories)
    assert contents[0].startswith("User: Use a polling wait")
    assert "Assistant: The retry test sleeps" in contents[1]
    assert "tool_result" not in "".join(contents)
    assert "file body" not in "".join(contents)
    assert {m["content_type"] for m in memories} == {"conversation"}
    assert {m["session_id"] for m in memories} == {"s-42"}


def test_missing_path_and_bad_json_are_usage_errors(exo: Exo, tmp_path: Path) -> None:
    missing = exo("import", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2
    assert "no such file" in _unboxed(missing.output)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bad = exo("import", str(broken))
    assert bad.exit_code == 2
    assert "not JSON" in _unboxed(bad.output)


def test_export_json_imports_back_and_markdown_and_obsidian_are_written(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    kept = exo.json("add", "Release notes live in CHANGELOG.md", "-n", namespace, "-t", "docs")
    rota = exo.json("add", "The on-call rota changes on Mondays", "-n", namespace)
    # Exported once enrichment is through with both: its write changes a memory, and so the
    # note a second export would write.
    _enriched(exo, kept, rota)

    backup = tmp_path / "backup.json"
    assert exo("export", str(backup), "-n", namespace).exit_code == 0
    document = json.loads(backup.read_text())
    assert {m["id"] for m in document["memories"]} >= {kept["id"]}

    other = f"{namespace}-copy"
    restored = exo.json("import", str(backup), "-n", other)
    assert restored["memories"]["created"] == len(document["memories"])
    assert exo.json("search", "changelog release notes", "-n", other)["results"]

    markdown = tmp_path / "all.md"
    assert exo("export", "-o", str(markdown), "-f", "markdown", "-n", namespace).exit_code == 0
    text = markdown.read_text()
    assert f"· {kept['id']}" in text
    assert "Release notes live in CHANGELOG.md" in text

    vault = tmp_path / "vault"
    first = exo("export", str(vault), "-f", "obsidian", "-n", namespace)
    assert first.exit_code == 0
    assert "notes written" in first.stdout
    note_path = vault / "Exocortex" / "memories" / f"{kept['id']}.md"
    note = note_path.read_text()
    assert note.startswith("---\n")
    assert f'namespace: "{namespace}"' in note
    assert "Release notes live in CHANGELOG.md" in note
    written_at = note_path.stat().st_mtime_ns
    # A second export rewrites only what changed: this note did not.
    assert exo("export", str(vault), "-f", "obsidian", "-n", namespace).exit_code == 0
    assert note_path.stat().st_mtime_ns == written_at


def test_an_export_is_restored_exactly_and_a_second_restore_changes_nothing(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    kept = exo.json("add", "The staging database is wiped every Sunday", "-n", namespace)
    lost = exo.json("add", "Feature flags live in the flags service", "-n", namespace)
    # Exported once enrichment is through with both: its write moves a memory's version, and a
    # restore rightly counts a memory that moved past the export as changed, not skipped.
    _enriched(exo, kept, lost)
    backup = tmp_path / "backup.json"
    assert exo("export", str(backup), "-n", namespace).exit_code == 0
    exo.json("forget", lost["id"], "--yes")
    before = exo.json("get", kept["id"])

    restored = exo.json("import", str(backup))
    assert restored["restored"]["memories"]["created"] == 1
    assert restored["restored"]["memories"]["skipped"] >= 1
    back = exo.json("get", lost["id"])  # the same id, text and time as before
    assert back["content"] == lost["content"]
    assert back["created_at"] == lost["created_at"]
    # A memory that is there is left alone (enrichment may have moved it past the export).
    assert exo.json("get", kept["id"])["version"] == before["version"]

    again = exo.json("import", str(backup))
    assert again["restored"]["memories"].get("created", 0) == 0


def test_encrypted_backup_is_listed_verified_and_refused_with_a_wrong_passphrase(
    exo: Exo, namespace: str
) -> None:
    exo.json("add", "Backups are encrypted with AES-256-GCM", "-n", namespace)
    made = exo("export", "--encrypt", "--passphrase", "correct horse battery")
    assert made.exit_code == 0, made.output
    name = next(b["name"] for b in exo.json("backups")["backups"])
    assert name in made.stdout

    report = exo.json("verify-backup", name, "--passphrase", "correct horse battery")
    assert report["ok"] is True
    assert report["counts"]["memories"] >= 1
    wrong = exo("verify-backup", name, "--passphrase", "not the passphrase")
    assert wrong.exit_code == 1
    preview = exo.json(
        "backups", "--restore", name, "--dry-run", "--passphrase", "correct horse battery"
    )
    assert preview["dry_run"] is True
    assert preview["sections"]["memories"]["skipped"] >= 1
