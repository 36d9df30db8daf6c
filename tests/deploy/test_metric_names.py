"""Every metric that dashboards and alert rules query is one the code exports.

Exported names are read from the Python sources: the string literal given to a prometheus_client
Counter, Gauge, Histogram or Summary. A name used in PromQL must be a series that metric really
exposes (counters as <name>_total, histograms as _bucket/_sum/_count), so a typo, a renamed metric
or a bare histogram name fails here rather than as an empty panel or a silent alert.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = [
    *sorted((ROOT / "libs").glob("*/src")),
    *sorted((ROOT / "services").glob("*/src")),
    ROOT / "gateway" / "src",
    ROOT / "mcp-adapter" / "src",
]
DEFINITION = re.compile(
    r"\b(Counter|Gauge|Histogram|Summary)\(\s*(?:name\s*=\s*)?[\"'](exo_[a-z0-9_]+)[\"']"
)
METRIC = re.compile(r"\bexo_[a-z0-9_]+")
QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')


def exposed_series(kind: str, name: str) -> set[str]:
    """The sample names prometheus_client exposes for a metric defined as kind(name)."""
    if kind == "Counter":
        base = name.removesuffix("_total")
        return {f"{base}_total", f"{base}_created"}
    if kind == "Histogram":
        return {f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_created"}
    if kind == "Summary":
        return {name, f"{name}_sum", f"{name}_count", f"{name}_created"}
    return {name}


def exported() -> dict[str, str]:
    """Exposed series name -> the source file that defines it."""
    names: dict[str, str] = {}
    for root in SOURCE_ROOTS:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else []:
            for kind, name in DEFINITION.findall(path.read_text()):
                for series in exposed_series(kind, name):
                    names[series] = str(path.relative_to(ROOT))
    return names


def names_in(promql: str) -> set[str]:
    """Metric names in a PromQL expression (label values and strings are ignored)."""
    return set(METRIC.findall(QUOTED.sub('""', promql)))


def referenced() -> dict[str, set[str]]:
    """Metric name -> where it is used (dashboards, rules, rule tests)."""
    uses: dict[str, set[str]] = {}

    def add(names: set[str], where: str) -> None:
        for name in names:
            uses.setdefault(name, set()).add(where)

    for path in sorted((ROOT / "deploy" / "grafana" / "dashboards").glob("*.json")):
        board = json.loads(path.read_text())
        panels = [p for top in board["panels"] for p in (top, *top.get("panels", []))]
        for panel in panels:
            for target in panel.get("targets", []):
                add(names_in(target.get("expr", "")), f"{path.name}: {panel['title']}")
        for var in board.get("templating", {}).get("list", []):
            query = var.get("query")
            query = query.get("query", "") if isinstance(query, dict) else (query or "")
            add(names_in(query), f"{path.name}: variable {var.get('name')}")
    for path in sorted((ROOT / "deploy" / "prometheus" / "rules").glob("*.yml")):
        for group in yaml.safe_load(path.read_text())["groups"]:
            for rule in group["rules"]:
                add(
                    names_in(rule["expr"]),
                    f"{path.name}: {rule.get('alert') or rule.get('record')}",
                )
    for path in sorted((ROOT / "deploy" / "prometheus" / "tests").glob("*.yml")):
        for case in yaml.safe_load(path.read_text())["tests"]:
            for series in case.get("input_series", []):
                add(names_in(series["series"].split("{", 1)[0]), f"{path.name}: input series")
    return uses


def test_referenced_metrics_are_exported() -> None:
    uses = referenced()
    assert uses, "no exo_ metrics referenced: the dashboards and rules were not parsed"
    defined = exported()
    missing = {name: sorted(where) for name, where in sorted(uses.items()) if name not in defined}
    assert not missing, (
        'metrics used in dashboards/rules that no Counter/Gauge/Histogram/Summary("exo_...") in '
        f"{', '.join(str(r.relative_to(ROOT)) for r in SOURCE_ROOTS)} exposes "
        f"({len(defined)} series found):\n"
        + "\n".join(f"  {name}  <- {', '.join(where)}" for name, where in missing.items())
    )


def test_name_parsing() -> None:
    """The parsers themselves, on known inputs."""
    assert names_in('sum(rate(exo_a_total{x="exo_not_a_metric"}[5m])) / exo_b') == {
        "exo_a_total",
        "exo_b",
    }
    assert exposed_series("Counter", "exo_c_total") == {"exo_c_total", "exo_c_created"}
    assert exposed_series("Counter", "exo_c") == {"exo_c_total", "exo_c_created"}
    assert "exo_h_seconds_bucket" in exposed_series("Histogram", "exo_h_seconds")
    assert "exo_h_seconds" not in exposed_series("Histogram", "exo_h_seconds")
    source = (
        'X = Histogram(\n    "exo_h_seconds", "doc", ["stage"])\n'
        'Y = Gauge(name="exo_g", documentation="d")'
    )
    assert DEFINITION.findall(source) == [("Histogram", "exo_h_seconds"), ("Gauge", "exo_g")]
