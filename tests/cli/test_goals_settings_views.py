"""goals, settings, stats, entities and graph through ``exo``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Exo


def test_goal_lifecycle_create_log_milestones_done(exo: Exo, namespace: str) -> None:
    goal = exo.json("goals", "create", "Ship the CLI", "-n", namespace, "--priority", "high")
    listed = exo.json("goals", "list", "-n", namespace)
    assert [g["id"] for g in listed["results"]] == [goal["id"]]

    logged = exo.json("goals", "log", goal["id"], "Import and export work end to end")
    assert logged["goal"]["progress_count"] == 1

    milestones = exo.json("goals", "milestones", goal["id"], "--add", "docs written")
    assert [m["title"] for m in milestones] == ["docs written"]
    completed = exo.json("goals", "milestones", goal["id"], "--complete", milestones[0]["id"])
    assert completed[0]["status"] == "completed"

    shown = exo("goals", "show", goal["id"])
    assert shown.exit_code == 0
    assert "docs written" in shown.stdout
    assert exo.json("goals", "done", goal["id"])["status"] == "completed"
    assert exo.json("goals", "list", "-n", namespace)["results"] == []


def test_settings_get_and_set_round_trip(exo: Exo) -> None:
    key = "scoring.rrf_k"
    before = exo.json("settings", "get", key)[key]
    try:
        assert exo.json("settings", "set", f"{key}=61") == {key: "61"}
        assert exo.json("settings", "get", key) == {key: "61"}
    finally:
        exo.json("settings", "set", f"{key}={before}")
    refused = exo("settings", "set", f"{key}=not-a-number")
    assert refused.exit_code == 1
    assert key in refused.stderr
    assert exo("settings", "set", "no-equals-sign").exit_code == 2


def test_stats_entities_and_graph_read_as_json_and_tables(exo: Exo, namespace: str) -> None:
    exo.json("add", "Alice from Stripe reviewed the Kafka migration", "-n", namespace)
    stats = exo.json("stats", "-n", namespace)
    assert stats["active_memories"] >= 1 or stats.get("total_memories", 0) >= 1
    assert exo("stats", "-n", namespace).exit_code == 0

    entities = exo.json("entities", "-n", namespace)
    assert "results" in entities
    assert exo("entities", "-n", namespace).exit_code == 0
    graph = exo.json("graph", "-n", namespace)
    assert {"entities", "relationships"} <= set(graph)
    assert exo("graph", "-n", namespace, "--analysis").exit_code == 0
