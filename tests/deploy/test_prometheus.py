"""Prometheus: config and rules pass promtool, rules have unit tests, every process is scraped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS_DIR = ROOT / "deploy" / "prometheus"
CONFIG = PROMETHEUS_DIR / "prometheus.yml"
RULE_FILES = sorted((PROMETHEUS_DIR / "rules").glob("*.yml"))
TEST_FILES = sorted((PROMETHEUS_DIR / "tests").glob("*.yml"))

SCRAPED = {
    "embedding": "embedding:9101",
    "ingest": "ingest:9102",
    "retrieval": "retrieval:9103",
    "enrichment": "enrichment:9104",
    "maintenance": "maintenance:9105",
    "gateway": "gateway:3210",
}


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def alert_rules() -> dict[str, dict[str, Any]]:
    rules = {}
    for path in RULE_FILES:
        for group in load(path)["groups"]:
            for rule in group["rules"]:
                if "alert" in rule:
                    assert rule["alert"] not in rules, f"duplicate alert {rule['alert']}"
                    rules[rule["alert"]] = rule
    return rules


def test_files_exist() -> None:
    assert CONFIG.is_file()
    assert RULE_FILES, "no rule files in deploy/prometheus/rules"
    assert TEST_FILES, "no rule tests in deploy/prometheus/tests"


def test_promtool_check_config(tools: Any) -> None:
    result = tools.run([tools.promtool(), "check", "config", CONFIG])
    assert result.returncode == 0, tools.describe(result)


def test_promtool_check_config_with_the_rules_loaded(tools: Any, tmp_path: Path) -> None:
    """The same config with rule_files pointing at the repository, as mounted in the container."""
    config = load(CONFIG)
    assert config["rule_files"] == ["/etc/prometheus/rules/*.yml"]
    config["rule_files"] = [str(PROMETHEUS_DIR / "rules" / "*.yml")]
    copy = tmp_path / "prometheus.yml"
    copy.write_text(yaml.safe_dump(config))
    result = tools.run([tools.promtool(), "check", "config", copy])
    assert result.returncode == 0, tools.describe(result)
    assert "SUCCESS" in result.stdout, tools.describe(result)
    assert "rules found" in result.stdout, tools.describe(result)


def test_promtool_check_rules(tools: Any) -> None:
    result = tools.run([tools.promtool(), "check", "rules", *RULE_FILES])
    assert result.returncode == 0, tools.describe(result)


def test_promtool_test_rules(tools: Any) -> None:
    result = tools.run([tools.promtool(), "test", "rules", *TEST_FILES])
    assert result.returncode == 0, tools.describe(result)
    assert "SUCCESS" in result.stdout, tools.describe(result)


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    fires: set[str] = set()
    quiet: set[str] = set()
    for path in TEST_FILES:
        for case in load(path)["tests"]:
            for check in case.get("alert_rule_test", []):
                (fires if check.get("exp_alerts") else quiet).add(check["alertname"])
    alerts = set(alert_rules())
    assert alerts - fires == set(), f"alerts never tested firing: {sorted(alerts - fires)}"
    assert alerts - quiet == set(), f"alerts never tested quiet: {sorted(alerts - quiet)}"
    assert (fires | quiet) - alerts == set(), (
        f"tests for unknown alerts: {sorted((fires | quiet) - alerts)}"
    )


def test_alerts_are_documented_and_classified() -> None:
    operations = (ROOT / "docs" / "operations.md").read_text()
    for name, rule in alert_rules().items():
        assert rule["labels"]["severity"] in {"warning", "critical"}, name
        assert rule["annotations"].get("summary"), f"{name} has no summary"
        assert rule["annotations"].get("description"), f"{name} has no description"
        assert name in operations, f"docs/operations.md does not explain {name}"


@pytest.mark.parametrize("alert", ["ExoServiceDown"])
def test_service_down_covers_every_scraped_process(alert: str) -> None:
    expr = alert_rules()[alert]["expr"]
    match = re.search(r'job=~"([^"]+)"', expr)
    assert match, expr
    assert set(match.group(1).split("|")) == set(SCRAPED)


def test_every_process_is_scraped() -> None:
    jobs = {job["job_name"]: job for job in load(CONFIG)["scrape_configs"]}
    for name, target in SCRAPED.items():
        assert name in jobs, f"no scrape job for {name}"
        targets = [t for sc in jobs[name]["static_configs"] for t in sc["targets"]]
        assert targets == [target], f"{name} scrapes {targets}, expected {target}"
        assert jobs[name].get("metrics_path", "/metrics") == "/metrics"


def test_rules_use_the_contracted_thresholds() -> None:
    rules = alert_rules()
    latency = rules["ExoSearchLatencyHigh"]["expr"]
    assert 'exo_retrieval_search_duration_seconds_bucket{stage="total"}' in latency
    assert "histogram_quantile(0.95" in latency
    assert "> 0.030" in latency
    assert 'status=~"5.."' in rules["ExoGatewayHighErrorRate"]["expr"]
    drift = rules["ExoIndexDrift"]["expr"]
    assert "abs(" in drift
    assert 'exo_postgres_memories{state="indexable"}' in drift
