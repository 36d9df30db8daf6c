"""Every job this service runs, by name (ListJobs reports exactly these)."""

from __future__ import annotations

from exocortex.maintenance.jobs.archival.service import ArchivalJob
from exocortex.maintenance.jobs.base import Job
from exocortex.maintenance.jobs.consolidation.service import AutoConsolidationJob, ConsolidationJob
from exocortex.maintenance.jobs.contradictions.service import ContradictionJob
from exocortex.maintenance.jobs.importance.service import ImportanceJob
from exocortex.maintenance.jobs.regression.service import RegressionJob


def all_jobs() -> dict[str, Job]:
    jobs: list[Job] = [
        ConsolidationJob(),
        AutoConsolidationJob(),
        ContradictionJob(),
        RegressionJob(),
        ImportanceJob(),
        ArchivalJob(),
    ]
    return {job.name: job for job in jobs}
