"""``exo analytics <report>`` against the real stack: every report answers as a table and as
the same JSON the REST route gives, over a namespace of the test's own."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

if TYPE_CHECKING:
    from conftest import Exo

REPORTS = [
    "summary",
    "access-distribution",
    "tag-effectiveness",
    "tag-health",
    "producer-quality",
    "quality-trend",
    "quality-distribution",
    "embedding-health",
    "decay-preview",
    "search-misses",
    "knowledge-gaps",
]


def _misses(exo: Exo, namespace: str, want: int) -> list[dict[str, Any]]:
    # The recorder writes misses a moment after the searches.
    misses: list[dict[str, Any]] = []
    for _ in range(60):
        misses = exo.json("analytics", "search-misses", "-n", namespace)
        if sum(m["count"] for m in misses) >= want:
            return misses
        time.sleep(0.5)
    raise AssertionError(f"misses not recorded: {misses}")


def test_every_report_prints_a_table_and_the_routes_json(
    exo: Exo, gateway_url: str, namespace: str
) -> None:
    for content in (
        "Grafana dashboards show the ingest latency",
        "Prometheus scrapes the gateway every 15 seconds",
        "Alertmanager pages the on-call person at night",
    ):
        exo.json("add", content, "-n", namespace, "-t", "observability")

    for report in REPORTS:
        shown = exo("analytics", report, "-n", namespace)
        assert shown.exit_code == 0, (report, shown.output)
        assert shown.stdout.strip(), report
        as_json = exo.json("analytics", report, "-n", namespace)
        route = httpx.get(
            f"{gateway_url}/api/analytics/{report}", params={"namespace": namespace}, timeout=30
        ).json()
        if report == "quality-distribution":
            # Quality decays with age: the two reads are a moment apart.
            assert as_json == pytest.approx(route, rel=1e-3), report
        else:
            assert as_json == route, report

    summary = exo.json("analytics", "summary", "-n", namespace)
    assert summary["totalActive"] == 3
    buckets = exo.json("analytics", "access-distribution", "-n", namespace)
    assert sum(b["count"] for b in buckets) == 3
    tags = exo.json("analytics", "tag-effectiveness", "-n", namespace)
    assert [(t["tag"], t["memoryCount"]) for t in tags] == [("observability", 3)]
    table = exo("analytics", "tag-effectiveness", "-n", namespace)
    assert "observability" in table.stdout


def test_search_misses_and_knowledge_gaps_with_their_options(exo: Exo, namespace: str) -> None:
    for query in ("terraform state lock", "Terraform  state LOCK", "terraform modules"):
        assert exo.json("search", query, "-n", namespace)["results"] == []
    misses = _misses(exo, namespace, 3)
    assert [(m["query"], m["count"]) for m in misses] == [
        ("terraform state lock", 2),
        ("terraform modules", 1),
    ]
    table = exo("analytics", "search-misses", "-n", namespace, "--days", "1")
    assert table.exit_code == 0
    assert "terraform state lock" in table.stdout
    assert exo.json("analytics", "search-misses", "-n", namespace, "--limit", "1") == misses[:1]

    gaps = exo.json("analytics", "knowledge-gaps", "-n", namespace, "--min-count", "3")
    assert [(g["topic"], g["count"]) for g in gaps] == [("terraform", 3)]
    assert exo.json("analytics", "knowledge-gaps", "-n", namespace, "--min-count", "4") == []
    shown = exo("analytics", "knowledge-gaps", "-n", namespace, "--min-count", "3")
    assert "terraform" in shown.stdout


def test_a_bad_option_is_the_servers_message_and_exit_1(exo: Exo) -> None:
    refused = exo("analytics", "search-misses", "--days", "1000")
    assert refused.exit_code == 1
    assert "days" in refused.stderr
    bad_kind = exo("analytics", "producer-quality", "--by", "planet")
    assert bad_kind.exit_code == 1
    assert "by" in bad_kind.stderr
