"""What a job is: a name, a scope, a schedule, a parameter model, and ``run``, which works on
typed domain values and returns a JSON-shaped report of what it did (or would do)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from exocortex.maintenance.deps import Deps

Scope = Literal["namespace", "global"]
Report = dict[str, Any]


class Params(BaseModel):
    """Base of every job's parameters: unknown keys are refused, so a typo is a 400, not a
    silently ignored option."""

    model_config = ConfigDict(extra="forbid")


@dataclass
class JobContext:
    """One run of one job. ``namespaces`` is what a namespace job works over (one, or every
    namespace the caller may see); ``progress`` is polled by callers while the run goes on."""

    run_id: int
    dry_run: bool
    namespaces: list[str]
    deps: Deps
    report_progress: Callable[[Mapping[str, Any]], Awaitable[None]]
    # api | schedule | startup: settings that switch a job off apply to unattended runs only.
    trigger: str = "api"
    progress: dict[str, Any] = field(default_factory=dict)

    async def step(self, stage: str, done: int = 0, total: int = 0) -> None:
        self.progress = {"stage": stage, "done": done, "total": total}
        await self.report_progress(self.progress)


class Job(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def scope(self) -> Scope: ...
    @property
    def schedule(self) -> str:
        """Cron expression (UTC) of the default schedule; "" for on-demand only."""

    @property
    def params_model(self) -> type[Params]: ...

    async def run(self, ctx: JobContext, params: Any) -> Report: ...
