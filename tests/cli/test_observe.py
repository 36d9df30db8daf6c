"""``exo observe`` and the metrics in ``exo status --json``: where each part serves its metrics,
and a prometheus.yml that scrapes them (tests/e2e/test_observability_live.py runs one)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from exocortex.cli import pidfile
from exocortex.cli.main import app
from exocortex.core.config import DEFAULT_METRICS_PORTS
from exocortex.core.runtime.ports import free_port
from exocortex.core.runtime.stack import SERVICES, Stack, StackConfig

PARTS = {*SERVICES, "gateway"}


@pytest.fixture
def running_record() -> Iterator[pidfile.Running]:
    """A stack `exo up` reports in its pid file, on ports other than the defaults (a live
    process stands in for `exo up`; nothing listens on the ports)."""
    data = pidfile.data_dir()
    data.mkdir(parents=True)
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gateway = f"http://127.0.0.1:{free_port()}"
    metrics = {name: f"http://127.0.0.1:{20000 + i}/metrics" for i, name in enumerate(SERVICES)}
    metrics["gateway"] = f"{gateway}/metrics"
    record = pidfile.Running(process.pid, gateway, "", str(data), "now", metrics)
    pidfile.write(record, data)
    try:
        yield record
    finally:
        process.kill()
        process.wait()


def test_a_stack_names_a_metrics_url_for_every_part(tmp_path: Path) -> None:
    stack = Stack(StackConfig.with_free_ports(tmp_path))
    urls = stack.metrics_urls
    assert set(urls) == PARTS
    assert urls["gateway"] == f"{stack.gateway_url}/metrics"
    for name in SERVICES:
        assert urls[name] == f"http://127.0.0.1:{stack.config.metrics_ports[name]}/metrics"


def test_observe_without_a_stack_names_the_embedded_defaults() -> None:
    result = CliRunner().invoke(app, ["observe", "--json"])
    assert result.exit_code == 0, result.output
    urls = json.loads(result.stdout)
    expected = {n: f"http://127.0.0.1:{p}/metrics" for n, p in DEFAULT_METRICS_PORTS.items()}
    assert urls == {**expected, "gateway": "http://127.0.0.1:3210/metrics"}


def test_status_json_reports_the_running_stacks_metrics(running_record: pidfile.Running) -> None:
    result = CliRunner().invoke(app, ["status", "--json"])
    assert result.exit_code == 1, result.output  # nothing answers on the record's gateway port
    report = json.loads(result.stdout)
    assert report["metrics"] == running_record.metrics
    assert set(report["metrics"]) == PARTS


def test_observe_config_scrapes_every_part_of_the_running_stack(
    running_record: pidfile.Running, tmp_path: Path
) -> None:
    rules = "/etc/exocortex/rules/*.yml"
    result = CliRunner().invoke(
        app, ["observe", "--config", "--scrape-interval", "5s", "--rules", rules]
    )
    assert result.exit_code == 0, result.output
    config = yaml.safe_load(result.stdout)
    assert config["global"] == {"scrape_interval": "5s", "evaluation_interval": "5s"}
    assert config["rule_files"] == [rules]
    scraped = {
        job["job_name"]: f"{job['scheme']}://{target}{job['metrics_path']}"
        for job in config["scrape_configs"]
        for static in job["static_configs"]
        for target in static["targets"]
    }
    # One job per part, named as the alert rules and dashboards of deploy/ select them.
    assert scraped == running_record.metrics

    promtool = shutil.which("promtool")
    if promtool is None:
        return
    path = tmp_path / "prometheus.yml"
    (tmp_path / "rules").mkdir()
    path.write_text(result.stdout.replace(rules, str(tmp_path / "rules" / "*.yml")))
    checked = subprocess.run(
        [promtool, "check", "config", str(path)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
