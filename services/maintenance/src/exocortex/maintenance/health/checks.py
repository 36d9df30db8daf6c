"""The eight health checks, each ok / warn / critical with a suggestion, over the caller's
namespaces (one SQL statement for the counts). Overall is the worst of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from exocortex.maintenance.health import repository

ORDER = {"ok": 0, "warn": 1, "critical": 2}


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str
    value: float | None
    detail: str
    suggestion: str


def _grade(value: float, warn: float, critical: float) -> str:
    return "critical" if value > critical else "warn" if value > warn else "ok"


async def run_checks(conn: repository.Conn, namespaces: Sequence[str] | None) -> dict[str, Any]:
    row, clusters = await repository.counts(conn, namespaces)
    total = max(int(row["total"]), 1)
    now = datetime.now(UTC)
    checks: list[Check] = []

    gap = row["unembedded"] / total
    checks.append(
        Check(
            "embedding_gap",
            _grade(gap, 0.10, 0.30),
            round(gap, 4),
            f"{row['unembedded']} of {row['total']} memories have no vector",
            "run the repair job (POST /api/reembed)",
        )
    )
    sparse = row["untagged"] / total
    checks.append(
        Check(
            "tag_sparsity",
            _grade(sparse, 0.30, 0.60),
            round(sparse, 4),
            f"{row['untagged']} memories have no tag",
            "tag memories when storing, or turn auto_tagging.enabled on",
        )
    )
    orphans = int(row["orphan_entities"])
    checks.append(
        Check(
            "entity_orphans",
            _grade(orphans, 20, 50),
            orphans,
            f"{orphans} entities are mentioned by no active memory",
            "run the graph job (memory_graph / POST /api/maintenance/jobs/graph/run)",
        )
    )
    desert = row["old_never_accessed"] / max(int(row["old"]), 1)
    checks.append(
        Check(
            "retrieval_desert",
            _grade(desert, 0.50, 0.80),
            round(desert, 4),
            f"{row['old_never_accessed']} of {row['old']} memories older than 30 "
            "days were never retrieved",
            "search with memory_context at the start of work; archive what is dead",
        )
    )
    mean = float(row["mean_importance"] or 0.5)
    collapse = "critical" if mean < 0.2 else "warn" if mean < 0.3 else "ok"
    checks.append(
        Check(
            "importance_collapse",
            collapse,
            round(mean, 4),
            f"mean importance {mean:.2f}",
            "review decay settings (importance.*)",
        )
    )
    checks.append(
        Check(
            "consolidation_backlog",
            _grade(clusters, 5, 15) if clusters is not None else "ok",
            clusters,
            f"{clusters} clusters at the last dry run"
            if clusters is not None
            else "no consolidation dry run yet",
            "consolidate (memory_consolidate dry_run=false)",
        )
    )
    newest = row["newest"]
    stall = (now - newest).total_seconds() / 86400 if newest else None
    checks.append(
        Check(
            "growth_stall",
            _grade(stall, 14, 30) if stall is not None else "warn",
            round(stall, 2) if stall is not None else None,
            f"newest memory {stall:.1f} days old" if stall is not None else "no memories",
            "store what you learn (memory_store)",
        )
    )
    last = row["last_access"]
    idle = (now - last).total_seconds() / 86400 if last else None
    checks.append(
        Check(
            "stale_access",
            _grade(idle, 14, 30) if idle is not None else "warn",
            round(idle, 2) if idle is not None else None,
            f"last retrieval {idle:.1f} days ago" if idle is not None else "nothing retrieved yet",
            "search before you work (memory_search / memory_context)",
        )
    )
    overall = max((c.status for c in checks), key=ORDER.__getitem__)
    return {"overall": overall, "checks": [asdict(c) for c in checks]}
