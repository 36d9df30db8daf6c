"""Grafana: provisioning matches compose, dashboards are valid JSON with valid PromQL."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GRAFANA_DIR = ROOT / "deploy" / "grafana"
DASHBOARDS = sorted((GRAFANA_DIR / "dashboards").glob("*.json"))
DATASOURCES = GRAFANA_DIR / "provisioning" / "datasources" / "prometheus.yml"
PROVIDERS = GRAFANA_DIR / "provisioning" / "dashboards" / "exocortex.yml"
EXPECTED_UIDS = {"exo-overview", "exo-search", "exo-ingest"}

# Grafana's own variables, replaced by a plain duration so promtool can parse the query.
GRAFANA_VARIABLES = re.compile(
    r"\$__(rate_interval|interval|range)|\$\{__(rate_interval|interval|range)\}"
)


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for panel in board.get("panels", []):
        out.append(panel)
        out.extend(panel.get("panels", []))
    return out


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(dashboard file, panel title, PromQL) for every query in every dashboard."""
    queries = []
    for path in DASHBOARDS:
        for panel in panels(load(path)):
            for target in panel.get("targets", []):
                if target.get("expr"):
                    queries.append((path.name, panel["title"], target["expr"]))
    return queries


def datasource_uid() -> str:
    sources = yaml.safe_load(DATASOURCES.read_text())["datasources"]
    assert len(sources) == 1
    assert sources[0]["type"] == "prometheus"
    assert sources[0]["url"] == "http://prometheus:9090"
    uid: str = sources[0]["uid"]
    return uid


def test_dashboards_exist_with_stable_unique_uids() -> None:
    uids = [load(path)["uid"] for path in DASHBOARDS]
    assert sorted(uids) == sorted(EXPECTED_UIDS), uids


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_is_well_formed(path: Path) -> None:
    board = load(path)
    assert board["title"].startswith("Exocortex / ")
    assert "exocortex" in board["tags"]
    assert board.get("id") is None, "provisioned dashboards must not carry a database id"
    ids = [panel["id"] for panel in panels(board)]
    assert len(ids) == len(set(ids)), f"duplicate panel ids in {path.name}"
    uid = datasource_uid()
    for panel in panels(board):
        pos = panel["gridPos"]
        assert pos["x"] >= 0, f"{panel['title']} is off the grid"
        assert pos["x"] + pos["w"] <= 24, f"{panel['title']} overflows the grid"
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == uid, panel["title"]
        assert panel["targets"], f"{panel['title']} has no query"
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == uid, panel["title"]


def test_dashboard_queries_are_valid_promql(tools: Any, tmp_path: Path) -> None:
    """Each query becomes a recording rule, which `promtool check rules` parses."""
    rules = [
        {"record": f"dashboard:query_{i}", "expr": GRAFANA_VARIABLES.sub("5m", expr)}
        for i, (_, _, expr) in enumerate(dashboard_queries())
    ]
    assert rules
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    result = tools.run([tools.promtool(), "check", "rules", path])
    if result.returncode != 0:
        numbered = "\n".join(
            f"query_{i}: {f} / {t}: {e}" for i, (f, t, e) in enumerate(dashboard_queries())
        )
        pytest.fail(f"{tools.describe(result)}\n{numbered}")


def test_provisioning_matches_compose() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    grafana = compose["services"]["grafana"]
    mounts = {m.split(":")[1]: m.split(":")[0] for m in grafana["volumes"] if m.startswith("./")}
    assert mounts["/etc/grafana/provisioning"] == "./deploy/grafana/provisioning"
    assert mounts["/etc/grafana/dashboards"] == "./deploy/grafana/dashboards"
    providers = yaml.safe_load(PROVIDERS.read_text())["providers"]
    assert [p["options"]["path"] for p in providers] == ["/etc/grafana/dashboards"]
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith("/etc/grafana/dashboards/")
    assert (GRAFANA_DIR / "dashboards" / Path(home).name).is_file(), home
