from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

# Every scheduled or on-demand job reports here (status: succeeded | failed).
JOB_RUNS = Counter("exo_job_runs_total", "Maintenance job runs", ["job", "status"])
JOB_DURATION = Histogram(
    "exo_job_duration_seconds",
    "Maintenance job run time",
    ["job"],
    buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600),
)
# What the last run of each job changed, per kind of change (superseded, archived, boosted, ...).
JOB_CHANGES = Counter(
    "exo_job_changes_total", "Memories or records changed by maintenance jobs", ["job", "change"]
)
JOB_LAST_SUCCESS = Gauge(
    "exo_job_last_success_timestamp_seconds", "When each job last succeeded", ["job"]
)


def record_report(job: str, report: Mapping[str, Any]) -> None:
    """Counts the report's ``changes`` (absent on a dry run, which changes nothing)."""
    JOB_LAST_SUCCESS.labels(job).set_to_current_time()
    if report.get("dry_run"):
        return
    changes = report.get("changes") or {}
    for change, count in changes.items():
        if isinstance(count, int) and count > 0:
            JOB_CHANGES.labels(job, change).inc(count)
