"""Observability proven live: a real Prometheus scrapes every part of the stack as `exo up`
starts it, with the scrape config `exo observe --config` writes and the alert rules of
deploy/prometheus. After a short mixed load, every target is up, every query of every Grafana
dashboard panel returns data, every rule evaluates cleanly, and an alert fires when a part dies.

Prints a table of each panel's series count (run with -s to see it)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from mcp import Client
from mcp.types import CallToolResult

from exocortex.cli.commands.observe import prometheus_yaml
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import Stack
from exocortex.mcp.server import create_server
from exocortex.mcp.settings import Attribution, McpSettings
from exocortex.testing import wait
from exocortex.testing.processes import listening_process

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        bool(os.environ.get("EXO_TEST_GATEWAY_URL")),
        reason="proves the stack `exo up` starts; the compose stack brings its own Prometheus",
    ),
]

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "rules"
DASHBOARDS = sorted((ROOT / "deploy" / "grafana" / "dashboards").glob("*.json"))
# Grafana's own interval variables, given the value Grafana would pick for a short range.
GRAFANA_INTERVALS = re.compile(
    r"\$__(rate_interval|interval|range)|\$\{__(rate_interval|interval|range)\}"
)
# The part killed to make an alert fire: a second gateway this test starts itself, scraped as
# one more instance of the job `gateway`, so the session stack loses nothing.
ALERT = "ExoServiceDownNow"
ALERT_FOR_SECONDS = 10
# Panels that may rightly return no series after the load, with the reason. Empty: every panel
# shows data on a healthy stack.
EXPECTED_EMPTY: dict[tuple[str, str], str] = {}


@dataclass(frozen=True)
class Query:
    board: str
    panel: str
    expr: str


def panel_queries() -> list[Query]:
    queries = []
    for path in DASHBOARDS:
        board = json.loads(path.read_text())
        panels = []
        for panel in board.get("panels", []):
            panels += [panel, *panel.get("panels", [])]
        variables = {v["name"]: v for v in board.get("templating", {}).get("list", [])}
        assert not variables, f"{path.name}: fill its template variables {sorted(variables)} here"
        for panel in panels:
            for target in panel.get("targets", []):
                if target.get("expr"):
                    expr = GRAFANA_INTERVALS.sub("1m", target["expr"])
                    queries.append(Query(path.stem, panel["title"], expr))
    return queries


def prometheus_binary() -> str:
    found = shutil.which("prometheus")
    if found is None:
        message = "the prometheus server is not installed (apt-get install prometheus)"
        if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
            pytest.fail(message)
        pytest.skip(message)
    return found


def fast_alert_rules() -> dict[str, Any]:
    """The real ExoServiceDown expression, waiting seconds instead of a minute."""
    real = next(
        rule
        for path in sorted(RULES.glob("*.yml"))
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if rule.get("alert") == "ExoServiceDown"
    )
    fast = {**real, "alert": ALERT, "for": f"{ALERT_FOR_SECONDS}s"}
    return {"groups": [{"name": "observability-test", "rules": [fast]}]}


@pytest.fixture
def second_gateway(exo_stack: Stack, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    port = free_port()
    env = {**exo_stack.env(), "EXO_GATEWAY_PORT": str(port)}
    with listening_process(
        [sys.executable, "-m", "exocortex.gateway"],
        env,
        port,
        what="a second gateway",
        start_timeout=120,
        log_path=tmp_path / "second-gateway.log",
    ) as process:
        yield f"http://127.0.0.1:{port}", process


@pytest.fixture
def prometheus(
    exo_stack: Stack, second_gateway: tuple[str, Any], tmp_path: Path
) -> Iterator[httpx.Client]:
    """Prometheus scraping every part each second, evaluating the rules each second."""
    targets: dict[str, list[str]] = {name: [url] for name, url in exo_stack.metrics_urls.items()}
    targets["gateway"].append(f"{second_gateway[0]}/metrics")
    test_rules = tmp_path / "observability-test-rules.yml"
    test_rules.write_text(yaml.safe_dump(fast_alert_rules()))
    config = tmp_path / "prometheus.yml"
    config.write_text(
        prometheus_yaml(
            targets,
            scrape_interval="1s",
            evaluation_interval="1s",
            rule_files=[str(RULES / "*.yml"), str(test_rules)],
        )
    )
    port = free_port()
    argv = [
        prometheus_binary(),
        f"--config.file={config}",
        f"--storage.tsdb.path={tmp_path / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    with (
        listening_process(
            argv,
            dict(os.environ),
            port,
            what="Prometheus",
            start_timeout=120,
            log_path=tmp_path / "prometheus.log",
        ),
        httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30.0) as client,
    ):
        wait.until(
            lambda: client.get("/-/ready").status_code == 200,
            what="Prometheus is ready",
            seconds=120,
            interval=0.5,
            retry_on=(httpx.TransportError,),
        )
        yield client


def api_data(client: httpx.Client, path: str, **params: str) -> Any:
    reply = client.get(path, params=params)
    assert reply.status_code == 200, f"{path} {params}: {reply.status_code} {reply.text}"
    body = reply.json()
    assert body["status"] == "success", body
    return body["data"]


def run_load(gateway: str, other_gateway: str) -> None:
    """Stores (one a duplicate), an import, searches, a read of a missing memory (a NOT_FOUND
    answer: the gRPC error panels), a maintenance job and an MCP call, through both gateways."""
    namespace = f"t-{uuid.uuid4().hex[:12]}"
    texts = [
        "We chose NATS JetStream for domain events: light, durable, replayable.",
        "Postgres is the source of truth; the indexes are projections rebuilt from it.",
        "The dashboard uses a dark theme with teal accents.",
        "Search fuses vector and keyword ranks with Reciprocal Rank Fusion.",
    ]
    with httpx.Client(base_url=gateway, timeout=120.0) as api:
        for text in [*texts, texts[0]]:
            stored = api.post("/api/memories", json={"content": text, "namespace": namespace})
            assert stored.status_code == 201, stored.text
        imported = api.post(
            "/api/memories/import",
            json={
                "memories": [
                    {"content": f"Imported note {i} about observability.", "namespace": namespace}
                    for i in range(3)
                ]
            },
        )
        assert imported.status_code == 200, imported.text
        for query in ("which message broker?", "source of truth", "rank fusion", "theme"):
            found = api.post("/api/memories/search", json={"query": query, "namespace": namespace})
            assert found.status_code == 200, found.text
        missing = api.get(f"/api/memories/{uuid.uuid4()}")
        assert missing.status_code == 404, missing.text
        # A job that changes something (the jobs' "memories changed" panel): a regression run
        # of a query of this namespace records the run and sets the query's baseline.
        golden = {"query": f"message broker {namespace}", "namespace": namespace}
        job = api.post(
            "/api/maintenance/jobs/retrieval-regression/run",
            json={"params": {"queries": [golden]}, "wait_seconds": 120},
        )
        assert job.status_code == 200, job.text
        assert job.json()["status"] == "succeeded", job.text
        assert job.json()["report"]["changes"] == {"runs": 1, "baselines": 1}, job.text
    with httpx.Client(base_url=other_gateway, timeout=120.0) as api:
        found = api.post(
            "/api/memories/search", json={"query": "JetStream", "namespace": namespace}
        )
        assert found.status_code == 200, found.text
    # An agent's call: the MCP adapter serves no metrics of its own, its calls are the
    # gateway's requests, so they show on the gateway's panels.
    reply = asyncio.run(mcp_search(gateway, namespace, "which message broker?"))
    assert not reply.is_error, reply.content
    assert reply.structured_content is not None
    assert reply.structured_content["count"] >= 1, reply.structured_content


async def mcp_search(gateway: str, namespace: str, query: str) -> CallToolResult:
    server = create_server(McpSettings(gateway_url=gateway), Attribution(agent="observability"))
    async with Client(server) as client:
        return await client.call_tool("memory_search", {"query": query, "namespace": namespace})


def series_counts(client: httpx.Client, queries: list[Query]) -> dict[Query, int]:
    return {q: len(api_data(client, "/api/v1/query", query=q.expr)["result"]) for q in queries}


def test_prometheus_sees_every_part_every_panel_every_rule_and_a_firing_alert(
    exo_stack: Stack, second_gateway: tuple[str, Any], prometheus: httpx.Client
) -> None:
    expected_targets = len(exo_stack.metrics_urls) + 1

    def targets_down() -> list[str]:
        active = api_data(prometheus, "/api/v1/targets", state="active")["activeTargets"]
        if len(active) != expected_targets:
            return [f"{len(active)} of {expected_targets} targets known"]
        return [
            f"{t['labels']['job']} {t['scrapeUrl']}: {t['health']} {t['lastError']}"
            for t in active
            if t["health"] != "up"
        ]

    wait.until(
        targets_down,
        what="every part's /metrics is scraped (target up)",
        seconds=120,
        interval=0.5,
        accept=lambda down: not down,
    )

    run_load(exo_stack.gateway_url, second_gateway[0])

    queries = panel_queries()
    assert queries, "no dashboard queries found"

    def empty_panels() -> list[Query]:
        counts = series_counts(prometheus, queries)
        return [q for q, n in counts.items() if n == 0 and (q.board, q.panel) not in EXPECTED_EMPTY]

    # Gauges read every 15 s (index documents, Postgres rows) need one more read after the load.
    wait.until(
        empty_panels,
        what="every dashboard query returns at least one series",
        seconds=180,
        interval=1.0,
        accept=lambda empty: not empty,
    )
    counts = series_counts(prometheus, queries)
    width = max(len(f"{q.board} / {q.panel}") for q in queries)
    print(f"\n{'dashboard / panel':<{width}}  series  query")
    for q, n in counts.items():
        print(f"{q.board + ' / ' + q.panel:<{width}}  {n:>6}  {q.expr}")

    def unhealthy_rules() -> list[str]:
        groups = api_data(prometheus, "/api/v1/rules")["groups"]
        rules = [(g["file"], r) for g in groups for r in g["rules"]]
        if not rules:
            return ["no rules loaded"]
        return [
            f"{Path(file).name}: {r['name']}: {r['health']} {r.get('lastError', '')}"
            for file, r in rules
            if r["health"] != "ok" or r.get("lastError")
        ]

    wait.until(
        unhealthy_rules,
        what="every rule of deploy/prometheus/rules evaluates without error",
        seconds=60,
        interval=0.5,
        accept=lambda bad: not bad,
    )
    loaded = {
        r["name"] for g in api_data(prometheus, "/api/v1/rules")["groups"] for r in g["rules"]
    }
    shipped = {
        r.get("alert") or r.get("record")
        for path in RULES.glob("*.yml")
        for g in yaml.safe_load(path.read_text())["groups"]
        for r in g["rules"]
    }
    assert shipped <= loaded, f"rules not loaded: {shipped - loaded}"

    instance = second_gateway[0].removeprefix("http://")
    assert not alert_states(prometheus, instance), "the alert fires before anything is down"
    _, process = second_gateway
    process.kill()
    process.wait()
    pending = wait.until(
        lambda: alert_states(prometheus, instance),
        what=f"{ALERT} is pending once the second gateway is killed",
        seconds=60,
        interval=0.2,
    )
    assert pending == ["pending"], f"{ALERT} skipped pending (for: {ALERT_FOR_SECONDS}s): {pending}"
    wait.until(
        lambda: alert_states(prometheus, instance),
        what=f"{ALERT} fires {ALERT_FOR_SECONDS}s after it is pending",
        seconds=60 + ALERT_FOR_SECONDS,
        interval=0.5,
        accept=lambda states: states == ["firing"],
    )
    alert = next(
        a
        for a in api_data(prometheus, "/api/v1/alerts")["alerts"]
        if a["labels"]["alertname"] == ALERT and a["labels"]["instance"] == instance
    )
    assert alert["labels"]["job"] == "gateway", alert


def alert_states(client: httpx.Client, instance: str) -> list[str]:
    """The test alert's states (pending, firing) for the scrape target ``instance``: none while
    it is up. Other targets are left out: a slow scrape of a busy part is not this test's kill."""
    return [
        a["state"]
        for a in api_data(client, "/api/v1/alerts")["alerts"]
        if a["labels"]["alertname"] == ALERT and a["labels"]["instance"] == instance
    ]
