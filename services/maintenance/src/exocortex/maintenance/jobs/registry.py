"""Every job this service runs, by name (ListJobs reports exactly these)."""

from __future__ import annotations

from exocortex.maintenance.jobs.archival.service import ArchivalJob
from exocortex.maintenance.jobs.backfill.service import EntityBackfillJob
from exocortex.maintenance.jobs.base import Job
from exocortex.maintenance.jobs.consolidation.service import AutoConsolidationJob, ConsolidationJob
from exocortex.maintenance.jobs.contradictions.service import ContradictionJob
from exocortex.maintenance.jobs.expiry.service import SentinelExpiryJob
from exocortex.maintenance.jobs.graph.service import GraphJob
from exocortex.maintenance.jobs.importance.service import ImportanceJob
from exocortex.maintenance.jobs.recalibration.service import RecalibrationJob
from exocortex.maintenance.jobs.regression.service import RegressionJob
from exocortex.maintenance.jobs.repair.reindex import ReindexJob
from exocortex.maintenance.jobs.repair.service import RepairJob
from exocortex.maintenance.jobs.tags.service import TagCleanupJob
from exocortex.maintenance.jobs.trash.service import TrashPurgeJob
from exocortex.maintenance.jobs.weights.service import WeightTuningJob


def all_jobs() -> dict[str, Job]:
    jobs: list[Job] = [
        ConsolidationJob(),
        AutoConsolidationJob(),
        ContradictionJob(),
        RegressionJob(),
        ImportanceJob(),
        ArchivalJob(),
        TagCleanupJob(),
        GraphJob(),
        EntityBackfillJob(),
        RepairJob(),
        ReindexJob(),
        WeightTuningJob(),
        TrashPurgeJob(),
        SentinelExpiryJob(),
        RecalibrationJob(),
    ]
    return {job.name: job for job in jobs}
