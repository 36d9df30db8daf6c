"""add, get, update, archive, restore, forget, recent and search through ``exo``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Exo


def test_add_from_argument_and_stdin_then_get_returns_them(exo: Exo, namespace: str) -> None:
    first = exo.json(
        "add", "The deploy key rotates every 90 days", "-n", namespace, "-t", "ops,security",
        "-i", "0.8", "--type", "decision",
    )  # fmt: skip
    piped = exo.json("add", "-n", namespace, input="Backups run nightly at 02:00\n")
    assert first["dedup_action"] == "created"
    assert first["indexed"] is True
    assert piped["content"].strip() == "Backups run nightly at 02:00"

    shown = exo.json("get", first["id"])
    assert shown["content"] == "The deploy key rotates every 90 days"
    assert {"ops", "security"} <= set(shown["tags"])  # enrichment may add more
    assert shown["importance"] == 0.8
    assert shown["content_type"] == "decision"
    assert shown["source"] == "cli"
    assert shown["namespace"] == namespace

    table = exo("get", first["id"])
    assert table.exit_code == 0
    assert "deploy key rotates" in table.stdout


def test_search_finds_a_memory_with_filters_and_compact_output(exo: Exo, namespace: str) -> None:
    stored = exo.json(
        "add", "Postgres vacuum runs after the bulk import", "-n", namespace, "-t", "db"
    )
    exo.json("add", "The office plant needs water on Fridays", "-n", namespace)

    found = exo.json("search", "postgres vacuum", "-n", namespace, "-t", "db")
    assert [r["memory"]["id"] for r in found["results"]] == [stored["id"]]

    compact = exo.json("search", "postgres vacuum", "-n", namespace, "--compact")
    assert compact["results"][0]["id"] == stored["id"]
    assert "preview" in compact["results"][0]

    table = exo("search", "postgres vacuum", "-n", namespace, "--verbose")
    assert table.exit_code == 0
    assert stored["id"] in table.stdout


def test_update_archive_restore_and_forget(exo: Exo, namespace: str) -> None:
    memory = exo.json("add", "Standup moved to 10:00", "-n", namespace)
    updated = exo.json("update", memory["id"], "-t", "meetings", "-i", "0.3")
    assert updated["tags"] == ["meetings"]
    assert updated["importance"] == 0.3
    assert updated["version"] > memory["version"]

    exo.json("archive", memory["id"])
    archived = exo.json("recent", "--archived", "-n", namespace)
    assert memory["id"] in [m["id"] for m in archived["results"]]
    assert memory["id"] not in [m["id"] for m in exo.json("recent", "-n", namespace)["results"]]

    assert exo.json("restore", memory["id"])["is_active"] is True
    assert exo.json("forget", memory["id"], "--yes")["ok"] is True

    gone = exo("get", memory["id"])
    assert gone.exit_code == 1
    assert "error:" in gone.stderr
    assert "fix:" in gone.stderr


def test_forget_asks_first_and_keeps_the_memory_on_no(exo: Exo, namespace: str) -> None:
    memory = exo.json("add", "Keep me", "-n", namespace)
    refused = exo("forget", memory["id"], input="n\n")
    assert refused.exit_code == 1
    assert exo.json("get", memory["id"])["id"] == memory["id"]


def test_server_refusal_is_shown_as_is_with_exit_1(exo: Exo, namespace: str) -> None:
    result = exo("add", "too important", "-n", namespace, "-i", "5")
    assert result.exit_code == 1
    # The server's problem detail, unchanged, and what to do about it.
    assert "importance" in result.stderr
    assert "less than or equal to 1" in result.stderr
    assert "fix:" in result.stderr


def test_usage_errors_exit_2(exo: Exo) -> None:
    assert exo("add", input="").exit_code == 2  # nothing to store
    assert exo("update", "01ABC").exit_code == 2  # nothing to change
    assert exo("search").exit_code == 2  # no query
    assert exo("add", "x", "--metadata", "[1]").exit_code == 2


def test_output_to_a_pipe_has_no_colour_codes(exo: Exo, namespace: str) -> None:
    exo.json("add", "Colour codes stay out of pipes", "-n", namespace)
    listed = exo("recent", "-n", namespace)
    assert listed.exit_code == 0
    assert "Colour codes stay out of pipes" in listed.stdout
    assert "\x1b[" not in listed.output
    failed = exo("get", "01NOSUCHMEMORY000000000000")
    assert failed.exit_code == 1
    assert "\x1b[" not in failed.stderr
