"""Maintenance through ``exo``: the job list, a run followed while the server still works on it,
consolidation (a dry run first), contradictions and the retrieval regression."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import psycopg
import pytest

from exocortex.cli import output
from exocortex.core.runtime.stack import Stack
from exocortex.testing.wait import until

if TYPE_CHECKING:
    from conftest import Exo

# One subject told four ways (similar, but not so close that dedup folds them together).
CLUSTER = [
    "The nightly Postgres backup runs at 01:30 and is copied to the offsite bucket.",
    "Postgres backups: every night at 01:30 a dump goes to the offsite storage bucket.",
    "Our database backup job dumps Postgres nightly and uploads the file offsite.",
    "Backup of the Postgres database happens each night; the dump is stored offsite.",
]


def test_jobs_are_listed_and_a_run_is_recorded(exo: Exo, namespace: str) -> None:
    names = {job["name"] for job in exo.json("maintenance", "list")["jobs"]}
    assert {"consolidation", "contradictions", "retrieval-regression"} <= names
    run = exo.json("maintenance", "run", "contradictions", "-n", namespace, "--dry-run")
    assert run["status"] == "succeeded"
    assert run["dry_run"] is True
    runs = exo.json("maintenance", "runs", "--job", "contradictions")["runs"]
    assert run["id"] in [r["id"] for r in runs]
    unknown = exo("maintenance", "run", "no-such-job")
    assert unknown.exit_code == 1
    assert "no-such-job" in unknown.stderr


def test_a_job_still_running_is_followed_until_it_finishes(
    exo: Exo, exo_stack: Stack, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome: dict[str, Any] = {}
    # exo opens its progress bar once the server has answered 202 (still running).
    following = threading.Event()
    progress = output.progress

    def followed(unit: str = "memories") -> Any:
        following.set()
        return progress(unit)

    monkeypatch.setattr(output, "progress", followed)

    def run() -> None:
        outcome["result"] = exo("maintenance", "run", "contradictions", "-n", namespace, "--json")

    # The job's first read waits behind this lock, so the server answers 202 and exo polls.
    with psycopg.connect(exo_stack.database_url) as conn, conn.transaction():
        conn.execute("LOCK TABLE contradictions IN ACCESS EXCLUSIVE MODE")
        worker = threading.Thread(target=run)
        worker.start()
        until(
            lambda: following.is_set() or not worker.is_alive(),
            what="exo got a 202 and follows the run",
            seconds=60,
        )
        assert following.is_set(), f"exo did not follow the run: {outcome}"
        assert worker.is_alive(), "exo returned while the job could not have finished"
    worker.join(timeout=120)
    result = outcome["result"]
    assert result.exit_code == 0, result.output
    assert '"status": "succeeded"' in result.stdout


def test_consolidate_shows_clusters_then_applies_them(exo: Exo, namespace: str) -> None:
    for text in CLUSTER:
        exo.json("add", text, "-n", namespace, "-t", "backups")
    preview = exo.json("consolidate", "-n", namespace, "--similarity", "0.6")
    assert preview["dry_run"] is True
    assert preview["clusters_found"] == 1
    assert len(exo.json("recent", "-n", namespace)["results"]) >= 3  # nothing changed

    applied = exo.json("consolidate", "-n", namespace, "--similarity", "0.6", "--apply")
    assert applied["dry_run"] is False
    summary_id = applied["consolidated"][0]["summary_id"]
    history = exo.json("consolidate", "-n", namespace, "--history")
    assert summary_id in [c["summary_id"] for c in history]
    table = exo("consolidate", "-n", namespace, "--similarity", "0.6")
    assert table.exit_code == 0


def test_contradictions_are_detected_and_resolved_keeping_one(exo: Exo, namespace: str) -> None:
    old = exo.json("add", "The API timeout is 30 seconds.", "-n", namespace)["id"]
    new = exo.json("add", "The API timeout is 60 seconds.", "-n", namespace)["id"]
    found = exo.json("contradictions", "--detect", "-n", namespace)
    pair = next(c for c in found if {c["memory_a_id"], c["memory_b_id"]} == {old, new})
    resolved = exo.json("contradictions", "--resolve", pair["id"], "--keep", new)
    assert resolved["status"] == "resolved"
    assert exo.json("get", old)["is_active"] is False
    assert exo.json("contradictions", "-n", namespace) == []
    refused = exo("contradictions", "--status", "open")
    assert refused.exit_code == 1
    assert "status" in refused.stderr


def test_retrieval_regression_reads_runs(exo: Exo) -> None:
    report = exo.json("retrieval-regression", "--run", "--queries", "postgres backup|api timeout")
    assert "runs" in report
    assert report["runs"]


def test_reembed_dry_run_reports_what_it_would_embed(exo: Exo) -> None:
    run = exo.json("reembed", "--dry-run")
    assert run["dry_run"] is True
    assert "to_embed" in run


def test_reindex_finds_the_indexes_in_step_with_postgres(exo: Exo) -> None:
    first = exo.json("reindex")
    assert "repaired" in first, first
    # Whatever the first run repaired, a second one right after finds nothing to repair.
    second = exo.json("reindex")
    assert second["repaired"] == {}, second


def test_backfill_reports_what_it_hands_back(exo: Exo, namespace: str) -> None:
    exo("add", "The billing API runs on Fastify.", "-n", namespace)
    preview = exo.json("backfill", "-n", namespace, "--dry-run")
    assert preview["status"] == "succeeded", preview
    assert preview["dry_run"] is True
    assert {"stuck", "unlinked_with_entities"} <= set(preview["report"])
    run = exo.json("backfill", "-n", namespace, "--limit", "10")
    assert run["report"]["changes"] == {
        "handed_to_enrichment": run["report"]["stuck"] + run["report"]["unlinked_with_entities"]
    }
    refused = exo("backfill", "--limit", "0")
    assert refused.exit_code == 1
    assert "limit" in refused.stderr
