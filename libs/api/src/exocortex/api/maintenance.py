"""Maintenance: the job list and runs, and one body per job route (consolidate,
contradictions, archive, importance, re-embed, tag merge, reindex) with its report."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.limits import (
    CLUSTER_SIZE_MAX,
    CLUSTER_SIZE_MIN,
    CLUSTERS_MAX,
    CONSOLIDATION_SIMILARITY_MIN,
    CONTRADICTION_SIMILARITY_MIN,
    COUNT_MAX,
    DAYS_MAX,
    ID_MAX,
    MAINTENANCE_WAIT_DEFAULT,
    MAINTENANCE_WAIT_MAX,
    NAMESPACE_MAX,
    RESOLUTION_MAX,
    TAG_AUTO_MERGE_MAX,
    TAG_CHARS_MAX,
    TAG_SIMILARITY_MAX,
    TAG_SIMILARITY_MIN,
    TAG_SUGGESTIONS_MAX,
)
from exocortex.api.vocabulary import (
    ContradictionStatus,
    HealthStatus,
    JobScope,
    RunStatus,
    TimeBucket,
)

Namespace = Annotated[str | None, Field(default=None, min_length=1, max_length=NAMESPACE_MAX)]
Wait = Annotated[float, Field(default=MAINTENANCE_WAIT_DEFAULT, ge=0, le=MAINTENANCE_WAIT_MAX)]


class JobBody(BaseModel):
    """A maintenance request body: unknown fields are refused. (Unlike `base.Strict` it lets
    non-finite numbers through to the bounds, which refuse them as out of range.)"""

    model_config = ConfigDict(extra="forbid")


class JobOut(BaseModel):
    name: str
    description: str
    scope: JobScope
    schedule: str = Field(description="Cron expression (UTC); empty: on demand only")
    last_run_at: str | None
    last_status: str
    next_run_at: str | None


class JobList(BaseModel):
    jobs: list[JobOut]
    count: int


class JobRunOut(BaseModel):
    id: int
    job: str
    status: RunStatus
    dry_run: bool
    params: dict[str, Any]
    report: dict[str, Any] | None
    progress: dict[str, Any]
    error: str | None
    started_at: str | None
    finished_at: str | None
    namespace: str | None
    trigger: str
    poll: str = Field(description="Where to poll this run")


class JobRunList(BaseModel):
    runs: list[JobRunOut]
    count: int


class RunJobBody(JobBody):
    dry_run: bool = False
    params: dict[str, Any] = Field(default_factory=dict, description="The job's parameters")
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class ReportOut(BaseModel):
    """A job's report (fields per job, see docs/maintenance.md) with the run that made it."""

    model_config = ConfigDict(extra="allow")
    run_id: int
    dry_run: bool


class ConsolidateBody(JobBody):
    # Dry run by default (the seed consolidated at once, and its sources were later purged).
    dry_run: bool = True
    min_similarity: float = Field(default=0.75, ge=CONSOLIDATION_SIMILARITY_MIN, le=1.0)
    min_cluster_size: int = Field(default=3, ge=CLUSTER_SIZE_MIN, le=CLUSTER_SIZE_MAX)
    max_clusters: int = Field(default=0, ge=0, le=CLUSTERS_MAX, description="0: every cluster")
    time_bucket: TimeBucket | None = None
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class AutoConsolidateBody(JobBody):
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class Consolidation(BaseModel):
    id: str
    namespace: str | None
    summary_id: str | None
    source_ids: list[str]
    strategy: str
    memories_merged: int
    created_at: str


class Contradiction(BaseModel):
    id: str
    namespace: str
    memory_a_id: str
    memory_b_id: str
    memory_a_preview: str
    memory_b_preview: str
    memory_a_active: bool
    memory_b_active: bool
    description: str
    kind: str | None
    score: float | None
    status: ContradictionStatus
    resolution: str | None
    created_at: str
    updated_at: str


class DetectBody(JobBody):
    dry_run: bool = False
    min_similarity: float | None = Field(default=None, ge=CONTRADICTION_SIMILARITY_MIN, le=1.0)
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class ContradictionPatch(JobBody):
    status: ContradictionStatus = "resolved"
    resolution: str | None = Field(default=None, max_length=RESOLUTION_MAX)
    keep_id: str | None = Field(
        default=None,
        max_length=ID_MAX,
        description="With status resolved: the memory that stays; the other is superseded",
    )
    namespace: Namespace = None


class ImportanceBody(JobBody):
    dry_run: bool = False
    boost_threshold: int | None = Field(default=None, ge=1, le=COUNT_MAX)
    decay_age_days: int | None = Field(default=None, ge=1, le=DAYS_MAX)
    graph_boost: bool = True
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class ArchiveBody(JobBody):
    dry_run: bool = False
    # 0 is "not touched since now", as in the original.
    stale_days: int = Field(default=90, ge=0, le=DAYS_MAX)
    max_importance: float = Field(default=0.3, ge=0.0, le=1.0)
    max_access_count: int = Field(default=2, ge=0, le=COUNT_MAX)
    abandoned_days: int = Field(default=365, ge=1, le=DAYS_MAX)
    include_expired: bool = True
    namespace: Namespace = None
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class ReembedBody(JobBody):
    dry_run: bool = False
    stale_model: bool = Field(
        default=True, description="Also rows embedded by another model than the running one"
    )
    limit: int = Field(default=10_000, ge=1, le=COUNT_MAX)
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class TagMergeBody(JobBody):
    dry_run: bool = False
    from_tag: str | None = Field(default=None, min_length=1, max_length=TAG_CHARS_MAX)
    to_tag: str | None = Field(default=None, min_length=1, max_length=TAG_CHARS_MAX)
    auto_merge: int = Field(
        default=0,
        ge=0,
        le=TAG_AUTO_MERGE_MAX,
        description="Merge up to this many near-certain pairs",
    )
    min_similarity: float = Field(default=0.8, ge=TAG_SIMILARITY_MIN, le=TAG_SIMILARITY_MAX)
    limit: int = Field(default=20, ge=1, le=TAG_SUGGESTIONS_MAX)
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class ReindexBody(JobBody):
    wait_seconds: Wait = MAINTENANCE_WAIT_DEFAULT


class HealthCheck(BaseModel):
    name: str
    status: HealthStatus
    value: float | None
    detail: str
    suggestion: str


class Health(BaseModel):
    overall: HealthStatus
    checks: list[HealthCheck]
