from __future__ import annotations

from prometheus_client import Counter, Histogram

# Every scheduled or on-demand job reports here (status: succeeded | failed).
JOB_RUNS = Counter("exo_job_runs_total", "Maintenance job runs", ["job", "status"])
JOB_DURATION = Histogram(
    "exo_job_duration_seconds",
    "Maintenance job run time",
    ["job"],
    buckets=(0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600),
)
