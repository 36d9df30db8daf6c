"""Aggregate reads: stats, the day-by-day timeline (plus decision lineage and topic evolution),
temporal stats (active days, streaks), the epoch → theme → episode hierarchy, and ping.

Days are counted in the caller's time zone (IANA name, default UTC), so "today" and streaks
match the user's calendar rather than the server's.
"""

from __future__ import annotations

import time
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Any
from zoneinfo import ZoneInfo

from exocortex.core.db.pool import Pool
from exocortex.core.domain.names import time_zone
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.records import MemoryRecord
from exocortex.retrieval.reads import report_repository

Params = dict[str, Any]

STARTED = time.monotonic()
MAX_TIMELINE_DAYS = 365
LINEAGE_DEPTH = 10


def zone(params: Params) -> ZoneInfo:
    name = params.get("timezone")
    return time_zone(str(name) if name else None)


def _int(params: Params, key: str, default: int, low: int, high: int) -> int:
    raw = params.get(key, default)
    try:
        value = int(raw if raw is not None else default)
    except (TypeError, ValueError) as exc:
        raise InvalidArgument(f"{key} must be an integer", field=key) from exc
    if not low <= value <= high:
        raise InvalidArgument(f"{key} must be between {low} and {high}", field=key)
    return value


def _when(params: Params, key: str) -> datetime | None:
    raw = params.get(key)
    if raw in (None, ""):
        return None
    try:
        value = datetime.fromisoformat(str(raw))
    except ValueError as exc:
        raise InvalidArgument(f"{key} must be an ISO 8601 date or time", field=key) from exc
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def brief(memory: MemoryRecord) -> dict[str, Any]:
    """A memory as reports show it: enough to list and link, not the whole row."""
    return {
        "id": memory.id,
        "namespace": memory.namespace,
        "content": memory.content,
        "content_type": memory.content_type,
        "importance": float(memory.importance),
        "tags": list(memory.tags or []),
        "created_at": memory.created_at.isoformat(),
        "superseded_by": memory.superseded_by,
    }


def streaks(days: list[date], today: date) -> tuple[int, int]:
    """(current, longest) runs of consecutive active days. The current streak counts back from
    today, or from yesterday when nothing has been stored yet today."""
    if not days:
        return 0, 0
    ordered = sorted(set(days))
    longest = run = 1
    for prev, cur in pairwise(ordered):
        run = run + 1 if cur - prev == timedelta(days=1) else 1
        longest = max(longest, run)
    present = set(ordered)
    start = today if today in present else today - timedelta(days=1)
    current = 0
    while start in present:
        current += 1
        start -= timedelta(days=1)
    return current, longest


class ReportService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def stats(self, namespace: str | None) -> dict[str, Any]:
        """Real counts: a memory is an active root row; chunks and archived rows are reported
        apart, never counted as memories."""
        c = await report_repository.counts(self._pool, namespace)
        return {
            # Seed field names; total = active + archived memories (chunks excluded).
            "total_memories": c.active + c.archived,
            "active_memories": c.active,
            "archived_memories": c.archived,
            "chunks": c.chunks,
            "by_content_type": c.by_content_type,
            "by_source": c.by_source,
            "total_entities": c.entities,
            "total_tags": c.tags,
            "oldest_memory": c.oldest.isoformat() if c.oldest else None,
            "newest_memory": c.newest.isoformat() if c.newest else None,
        }

    async def timeline(self, namespace: str | None, params: Params) -> dict[str, Any]:
        mode = str(params.get("mode") or "days")
        if mode == "days":
            return {"days": await self._days(namespace, params)}
        if mode == "decisions":
            return {"decisions": await self._decisions(namespace, params)}
        if mode == "lineage":
            return {"lineage": await self._lineage(params)}
        raise InvalidArgument("mode must be days, decisions or lineage", field="mode")

    async def _days(self, namespace: str | None, params: Params) -> list[dict[str, Any]]:
        tz = zone(params)
        limit = _int(params, "limit", 30, 1, MAX_TIMELINE_DAYS)
        include = str(params.get("include_memories", "true")).lower() != "false"
        after, before = _when(params, "after"), _when(params, "before")
        found = await report_repository.days(
            self._pool, tz, namespace, after, before, limit, with_memories=include
        )
        out = []
        for day, count, rows in found:
            entry: dict[str, Any] = {"date": day.isoformat(), "count": count}
            if include:
                entry["memories"] = [brief(r) for r in rows]
            out.append(entry)
        return out

    async def _decisions(self, namespace: str | None, params: Params) -> list[dict[str, Any]]:
        limit = _int(params, "limit", 50, 1, 500)
        rows, supersedes = await report_repository.decisions(self._pool, namespace, limit)
        return [{**brief(r), "supersedes": sorted(supersedes.get(r.id, []))} for r in rows]

    async def _lineage(self, params: Params) -> list[dict[str, Any]]:
        memory_id = str(params.get("memory_id") or "")
        if not memory_id:
            raise InvalidArgument("memory_id is required for lineage", field="memory_id")
        chain = await report_repository.lineage(self._pool, memory_id, LINEAGE_DEPTH)
        if chain is None:
            raise NotFound(f"memory {memory_id} not found", field="memory_id")
        return [brief(r) for r in chain]

    async def temporal_stats(self, namespace: str | None, params: Params) -> dict[str, Any]:
        tz = zone(params)
        rows = await report_repository.active_days(self._pool, tz, namespace)
        if not rows:
            return {
                "total_days": 0,
                "avg_per_day": 0.0,
                "most_active_day": None,
                "most_active_count": 0,
                "streak_current": 0,
                "streak_longest": 0,
            }
        busiest_day, busiest_count = max(rows, key=lambda r: (r[1], r[0]))
        current, longest = streaks([day for day, _ in rows], datetime.now(tz).date())
        total = sum(n for _, n in rows)
        return {
            "total_days": len(rows),
            "avg_per_day": round(total / len(rows), 2),
            "most_active_day": busiest_day.isoformat(),
            "most_active_count": busiest_count,
            "streak_current": current,
            "streak_longest": longest,
        }

    async def hierarchy(self, namespace: str | None, params: Params) -> dict[str, Any]:
        """Epochs (tag `epoch`, by month) → themes (tag `narrative`) → episodes (active,
        non-metadata memories of the 7 days before the theme, most important first)."""
        tz = zone(params)
        max_episodes = _int(params, "max_episodes", 20, 1, 100)
        month = params.get("month")
        after, before = _when(params, "after"), _when(params, "before")
        if month:
            try:
                first = datetime.strptime(str(month), "%Y-%m").replace(tzinfo=tz)
            except ValueError as exc:
                raise InvalidArgument("month must be YYYY-MM", field="month") from exc
            after = first
            before = (first + timedelta(days=32)).replace(day=1)
        found = await report_repository.hierarchy(
            self._pool, namespace, after, before, max_episodes
        )
        theme_out = [
            {
                **brief(theme),
                "month": theme.created_at.astimezone(tz).strftime("%Y-%m"),
                "linked": theme.id in found.linked,
                "episodes": [brief(e) for e in found.episodes[theme.id]],
            }
            for theme in found.themes
        ]
        epoch_out = []
        epoch_months: set[str] = set()
        for epoch in found.epochs:
            m = epoch.created_at.astimezone(tz).strftime("%Y-%m")
            epoch_months.add(m)
            epoch_out.append(
                {
                    **brief(epoch),
                    "month": m,
                    "linked": epoch.id in found.linked,
                    "themes": [t for t in theme_out if t["month"] == m],
                }
            )
        return {
            "epochs": epoch_out,
            "orphan_themes": [t for t in theme_out if t["month"] not in epoch_months],
            "time_range": {
                "after": after.isoformat() if after else None,
                "before": before.isoformat() if before else None,
            },
        }

    async def ping(self, namespace: str | None) -> dict[str, Any]:
        stats = await self.stats(namespace)
        return {
            "status": "ok",
            "active": stats["active_memories"],
            "total": stats["total_memories"],
            "chunks": stats["chunks"],
            "entities": stats["total_entities"],
            "tags": stats["total_tags"],
            "oldest": stats["oldest_memory"],
            "newest": stats["newest_memory"],
            "uptime": round(time.monotonic() - STARTED, 1),
        }
