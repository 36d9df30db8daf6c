"""The original CLI's options on ``exo``, against the session's real stack: attribution and
benchmark flags on ``add``, ``consolidate --dry-run``, the regression's golden queries and
baselines, ``verify-backup`` of a local file, and ``doctor`` / ``status`` beside a running
Exocortex."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import httpx
import pytest

from exocortex.core.runtime.stack import Stack

if TYPE_CHECKING:
    from conftest import Exo

PASS = "local verify passphrase"


def test_add_takes_attribution_and_benchmark_flags(exo: Exo, namespace: str) -> None:
    stored = exo.json(
        "add",
        "Benchmark item: the answer is 42.",
        "-n",
        namespace,
        "--provider",
        "anthropic",
        "--model-id",
        "claude-x-1",
        "--model-name",
        "Claude X",
        "--conversation-id",
        "conv-7",
        "--benchmark",
    )
    memory = httpx.get(f"{exo.url}/api/memories/{stored['id']}", timeout=30).json()
    assert memory["provider"] == "anthropic"
    assert memory["model_id"] == "claude-x-1"
    assert memory["model_name"] == "Claude X"
    assert memory["conversation_id"] == "conv-7"
    assert "benchmark-artifact" in memory["tags"]
    assert memory["is_metadata"] is True
    plain = exo.json("add", "An ordinary note.", "-n", namespace)
    assert "benchmark-artifact" not in plain["tags"]


def test_consolidate_dry_run_is_the_default_said_aloud(exo: Exo, namespace: str) -> None:
    for n in range(3):
        exo.json("add", f"The release train leaves every Tuesday at noon ({n}).", "-n", namespace)
    preview = exo.json("consolidate", "-n", namespace, "--similarity", "0.6", "--dry-run")
    assert preview["dry_run"] is True
    assert "consolidated" not in preview
    both = exo("consolidate", "-n", namespace, "--dry-run", "--apply")
    assert both.exit_code == 2
    assert "not both" in both.output


@pytest.fixture
def golden_queries_restored(exo: Exo) -> object:
    before = httpx.get(f"{exo.url}/api/settings", timeout=30).json()
    yield None
    httpx.patch(
        f"{exo.url}/api/settings",
        json={"retrieval_regression.queries": before["retrieval_regression.queries"]},
        timeout=30,
    ).raise_for_status()


def test_regression_sets_queries_and_manages_baselines(
    exo: Exo, golden_queries_restored: object
) -> None:
    queries = "cli golden alpha|cli golden beta"
    exo.json("retrieval-regression", "--set-queries", queries, "--set-only")
    stored = httpx.get(f"{exo.url}/api/settings", timeout=30).json()
    assert json.loads(stored["retrieval_regression.queries"]) == queries.split("|")

    first = exo.json("retrieval-regression", "--run")
    assert first["run"]["golden_count"] == 2
    run_id = first["run"]["run_id"]
    assert exo.json("retrieval-regression", "--promote-run", "latest")["latest"] is not None
    assert exo("retrieval-regression", "--reset-queries", "cli golden alpha").exit_code == 0

    compared = exo.json(
        "retrieval-regression",
        "--compare-against",
        run_id,
        "--min-overlap",
        "0.5",
        "--max-rank-shift",
        "1.5",
    )
    report = compared["run"]
    assert report["compared_against"] == run_id
    assert report["min_overlap"] == 0.5
    assert report["max_rank_shift"] == 1.5
    assert report["baselines_set"] == 0  # comparing leaves the baselines alone
    # Promoting it again sets every query's baseline, the reset one included.
    assert exo("retrieval-regression", "--update-baselines").exit_code == 0
    assert exo("retrieval-regression", "--reset-baselines").exit_code == 0
    unknown = exo("retrieval-regression", "--compare-against", "no-such-run")
    assert unknown.exit_code == 1


def test_regression_run_options_reach_the_job(exo: Exo, golden_queries_restored: object) -> None:
    token = uuid.uuid4().hex
    # Different enough not to be taken for duplicates of one another.
    topics = ("the boiler service", "a dentist visit", "the tax return", "tyre pressure")
    for topic in topics:
        reply = httpx.post(
            f"{exo.url}/api/memories",
            json={"content": f"Probe {token}: remember {topic} next week.", "namespace": "default"},
            timeout=60,
        )
        assert reply.status_code == 201, reply.text
    report = exo.json(
        "retrieval-regression",
        "--run",
        "--queries",
        f"probe {token}",
        "--limit",
        "2",
        "--no-alerts-as-memory",
    )["run"]
    assert report["limit"] == 2
    assert report["alerts_as_memory"] is False
    assert [len(r["current_ids"]) for r in report["results"]] == [2]
    # --include-metadata is kept with golden queries set from the command line.
    exo.json(
        "retrieval-regression", "--set-queries", "meta probe", "--set-only", "--include-metadata"
    )
    stored = httpx.get(f"{exo.url}/api/settings", timeout=30).json()
    assert json.loads(stored["retrieval_regression.queries"]) == [
        {"query": "meta probe", "include_metadata": True}
    ]


def test_verify_backup_checks_a_local_file(
    exo: Exo, exo_stack: Stack, namespace: str, tmp_path: Path
) -> None:
    exo.json("add", "A memory the backup must hold.", "-n", namespace)
    export = httpx.get(f"{exo.url}/api/export", params={"namespace": namespace}, timeout=60)
    document = tmp_path / "export.json"
    document.write_bytes(export.content)
    checked = exo.json("verify-backup", str(document), "--check-embeddings", "--sample-size", "5")
    assert checked["ok"] is True, checked
    assert checked["kind"] == "export document"
    assert checked["counts"]["memories"] == 1
    assert checked["embeddings"]["sampled"] == 1
    assert checked["embeddings"]["with_content"] == 1

    made = httpx.post(f"{exo.url}/api/backups", json={"passphrase": PASS}, timeout=300)
    assert made.status_code == 201, made.text
    backup = Path(exo_stack.config.data_dir) / "backups" / made.json()["name"]
    local = tmp_path / backup.name
    local.write_bytes(backup.read_bytes())
    verified = exo.json("verify-backup", str(local), "--passphrase", PASS, "--check-embeddings")
    assert verified["ok"] is True, verified
    assert verified["kind"] == "encrypted backup"
    assert verified["counts"]["memories"] >= 1
    assert verified["embeddings"]["sampled"] >= 1

    wrong = exo("verify-backup", str(local), "--passphrase", "not the passphrase", "--json")
    assert wrong.exit_code == 1
    assert json.loads(wrong.stdout)["ok"] is False
    damaged = tmp_path / "damaged.exobak"
    raw = bytearray(local.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    damaged.write_bytes(bytes(raw))
    assert exo("verify-backup", str(damaged), "--passphrase", PASS).exit_code == 1


def test_doctor_counts_a_running_exocortex_s_ports_as_its_own(
    exo: Exo, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = urlsplit(exo.url).port
    assert port is not None
    # The ports `exo up` would take on this gateway port: held by the stack under test.
    monkeypatch.setenv("EXO_GATEWAY_PORT", str(port))
    checks = {c["name"]: c for c in exo.json("doctor")}
    assert checks["ports"]["state"] == "ok", checks["ports"]
    assert str(port) in checks["ports"]["detail"]
    assert "Exocortex" in checks["ports"]["detail"]
    assert checks["gateway"]["state"] == "ok"


def test_status_takes_the_rest_api_address_up_prints(exo: Exo) -> None:
    # `exo up` shows the REST API as <root>/api: given that, status still finds the health.
    report = type(exo)(f"{exo.url}/api/").json("status")
    assert report["health"]["status"] == "ok"
    assert report["url"] == exo.url


def test_trash_says_who_archived_what_and_empties(exo: Exo, namespace: str) -> None:
    mine = exo.json("add", "A note I throw away.", "-n", namespace)["id"]
    archived = httpx.post(f"{exo.url}/api/memories/{mine}/archive", timeout=60)
    assert archived.status_code == 200, archived.text
    listed = exo.json("trash", "-n", namespace)
    items = listed["report"]["items"]
    assert [(i["id"], i["archived_by"], i["purged"]) for i in items] == [(mine, "person", False)]
    table = exo("trash", "-n", namespace)
    assert table.exit_code == 0, table.output
    assert "person" in table.output
    emptied = exo.json("trash", "-n", namespace, "--empty", "--yes")
    assert emptied["report"]["purged"] == 1
    assert httpx.get(f"{exo.url}/api/memories/{mine}", timeout=30).status_code == 404


def test_up_takes_short_port_and_host_flags(exo: Exo) -> None:
    # -H is taken as the host and -p as the port: a port that is not a number is refused
    # by name before anything starts.
    result = exo("up", "-H", "127.0.0.1", "-p", "not-a-port")
    assert result.exit_code == 2
    assert "'--port' / '-p'" in result.output
    unknown = exo("up", "-Z")
    assert unknown.exit_code == 2
