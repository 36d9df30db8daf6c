from __future__ import annotations

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings


class MaintenanceSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['maintenance']}",
        validation_alias=AliasChoices("EXO_MAINTENANCE_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["maintenance"],
        validation_alias=AliasChoices("EXO_MAINTENANCE_METRICS_PORT"),
    )
    # How long the search recorder lets events gather before writing a batch. Each batch is a
    # transaction and a few statements on the cores searches use, so a steady stream of searches
    # is cheapest recorded every couple of seconds; access counts and impressions lag by that.
    recorder_linger_seconds: float = Field(
        default=2.0,
        ge=0.0,
        le=60.0,
        validation_alias=AliasChoices("EXO_MAINTENANCE_RECORDER_LINGER_SECONDS"),
    )
    # The scheduler: off runs jobs on demand only (tests, a replica kept for the API).
    scheduler_enabled: bool = Field(
        default=True, validation_alias=AliasChoices("EXO_MAINTENANCE_SCHEDULER")
    )
    # Cron expressions (UTC) by job name, over each job's default; "" turns a job's schedule
    # off. JSON, e.g. EXO_MAINTENANCE_SCHEDULES='{"consolidation": "", "archival": "0 5 * * *"}'.
    schedules: dict[str, str] = Field(
        default_factory=dict, validation_alias=AliasChoices("EXO_MAINTENANCE_SCHEDULES")
    )
    # Jobs whose unattended runs (schedule, start-up) are dry runs: a preview that the health
    # check and the dashboard read. Consolidation takes memories out of search into summaries;
    # run over every cluster each night it would merge a user's notes unasked (a data-safety bug
    # of the original). Auto-consolidation (stricter, a few clusters a night) is the unattended
    # path; [] makes the nightly consolidation a real run again.
    scheduled_previews: list[str] = Field(
        default_factory=lambda: ["consolidation"],
        validation_alias=AliasChoices("EXO_MAINTENANCE_SCHEDULED_PREVIEWS"),
    )
    # Run once shortly after start (the seed's start-up pass, without consolidating).
    startup_jobs: list[str] = Field(
        default_factory=lambda: ["importance", "archival", "repair"],
        validation_alias=AliasChoices("EXO_MAINTENANCE_STARTUP_JOBS"),
    )
    # How often a schedule held in a runtime setting (retrieval_regression.schedule) is read
    # again while the scheduler waits: a change applies within this time.
    schedule_refresh_seconds: float = Field(
        default=30.0,
        gt=0.0,
        validation_alias=AliasChoices("EXO_MAINTENANCE_SCHEDULE_REFRESH_SECONDS"),
    )
    startup_delay_seconds: float = Field(
        default=10.0, ge=0.0, validation_alias=AliasChoices("EXO_MAINTENANCE_STARTUP_DELAY_SECONDS")
    )
