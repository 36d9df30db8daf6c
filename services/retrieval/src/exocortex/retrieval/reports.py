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
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import psycopg
from psycopg_pool import AsyncConnectionPool

from exocortex.core import scope
from exocortex.core.errors import InvalidArgument, NotFound
from exocortex.core.repositories import memories

Row = dict[str, Any]
Params = dict[str, Any]

STARTED = time.monotonic()
MAX_TIMELINE_DAYS = 365
LINEAGE_DEPTH = 10


def zone(params: Params) -> ZoneInfo:
    name = params.get("timezone") or "UTC"
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidArgument(f"unknown time zone {name!r}", field="timezone") from exc


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


def brief(row: Row) -> dict[str, Any]:
    """A memory as reports show it: enough to list and link, not the whole row."""
    return {
        "id": row["id"],
        "namespace": row["namespace"],
        "content": row["content"],
        "content_type": row["content_type"],
        "importance": float(row["importance"]),
        "tags": list(row.get("tags") or []),
        "created_at": row["created_at"].isoformat(),
        "superseded_by": row.get("superseded_by"),
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
    def __init__(self, pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]]) -> None:
        self._pool = pool

    async def stats(self, namespace: str | None) -> dict[str, Any]:
        """Real counts: a memory is an active root row; chunks and archived rows are reported
        apart, never counted as memories."""
        ns = {"ns": namespace}
        scope = "(%(ns)s::text IS NULL OR namespace = %(ns)s)"
        async with self._pool.connection() as conn:
            counts = await (
                await conn.execute(
                    f"""
                    SELECT count(*) FILTER (WHERE is_active AND parent_id IS NULL) AS active,
                           count(*) FILTER (WHERE NOT is_active AND parent_id IS NULL) AS archived,
                           count(*) FILTER (WHERE parent_id IS NOT NULL) AS chunks,
                           min(created_at) FILTER (WHERE parent_id IS NULL) AS oldest,
                           max(created_at) FILTER (WHERE parent_id IS NULL) AS newest
                      FROM memories WHERE {scope}
                    """,
                    ns,
                )
            ).fetchone()
            assert counts is not None
            by_type = await (
                await conn.execute(
                    f"SELECT content_type AS k, count(*) AS n FROM memories WHERE {scope} "
                    "AND is_active AND parent_id IS NULL GROUP BY 1 ORDER BY 1",
                    ns,
                )
            ).fetchall()
            by_source = await (
                await conn.execute(
                    f"SELECT source AS k, count(*) AS n FROM memories WHERE {scope} "
                    "AND is_active AND parent_id IS NULL GROUP BY 1 ORDER BY 1",
                    ns,
                )
            ).fetchall()
            entities = await (
                await conn.execute(f"SELECT count(*) AS n FROM entities WHERE {scope}", ns)
            ).fetchone()
            tags = await (
                await conn.execute(
                    "SELECT count(DISTINCT t.tag) AS n FROM memory_tags t "
                    "JOIN memories m ON m.id = t.memory_id WHERE m.is_active "
                    "AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)",
                    ns,
                )
            ).fetchone()
        active, archived = int(counts["active"]), int(counts["archived"])
        return {
            # Seed field names; total = active + archived memories (chunks excluded).
            "total_memories": active + archived,
            "active_memories": active,
            "archived_memories": archived,
            "chunks": int(counts["chunks"]),
            "by_content_type": {r["k"]: int(r["n"]) for r in by_type},
            "by_source": {r["k"]: int(r["n"]) for r in by_source},
            "total_entities": int(entities["n"]) if entities else 0,
            "total_tags": int(tags["n"]) if tags else 0,
            "oldest_memory": counts["oldest"].isoformat() if counts["oldest"] else None,
            "newest_memory": counts["newest"].isoformat() if counts["newest"] else None,
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
        async with self._pool.connection() as conn:
            cur = await conn.execute(
                """
                SELECT (m.created_at AT TIME ZONE %(tz)s)::date AS day, count(*) AS n
                  FROM memories m
                 WHERE m.is_active AND m.parent_id IS NULL
                   AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                   AND (%(after)s::timestamptz IS NULL OR m.created_at >= %(after)s)
                   AND (%(before)s::timestamptz IS NULL OR m.created_at < %(before)s)
                 GROUP BY 1 ORDER BY 1 DESC LIMIT %(limit)s
                """,
                {"tz": tz.key, "ns": namespace, "after": after, "before": before, "limit": limit},
            )
            days = await cur.fetchall()
            out = []
            for d in days:
                entry: dict[str, Any] = {"date": d["day"].isoformat(), "count": int(d["n"])}
                if include:
                    start = datetime.combine(d["day"], datetime.min.time(), tz)
                    rows = await (
                        await conn.execute(
                            f"""{memories.SELECT_MEMORY}
                                WHERE m.is_active AND m.parent_id IS NULL
                                  AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                                  AND m.created_at >= %(start)s AND m.created_at < %(end)s
                                ORDER BY m.importance DESC, m.created_at DESC LIMIT 20""",
                            {"ns": namespace, "start": start, "end": start + timedelta(days=1)},
                        )
                    ).fetchall()
                    entry["memories"] = [brief(r) for r in rows]
                out.append(entry)
        return out

    async def _decisions(self, namespace: str | None, params: Params) -> list[dict[str, Any]]:
        limit = _int(params, "limit", 50, 1, 500)
        async with self._pool.connection() as conn:
            rows = await (
                await conn.execute(
                    f"""{memories.SELECT_MEMORY}
                        WHERE m.is_active AND m.parent_id IS NULL
                          AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                          AND (m.content_type = 'decision' OR EXISTS (
                               SELECT 1 FROM memory_tags t
                                WHERE t.memory_id = m.id AND t.tag = 'decision'))
                        ORDER BY m.created_at DESC, m.id DESC LIMIT %(limit)s""",
                    {"ns": namespace, "limit": limit},
                )
            ).fetchall()
            ids = [r["id"] for r in rows]
            older = await (
                await conn.execute(
                    "SELECT id, superseded_by FROM memories WHERE superseded_by = ANY(%s)",
                    (ids,),
                )
            ).fetchall()
        supersedes: dict[str, list[str]] = {}
        for r in older:
            supersedes.setdefault(r["superseded_by"], []).append(r["id"])
        return [{**brief(r), "supersedes": sorted(supersedes.get(r["id"], []))} for r in rows]

    async def _lineage(self, params: Params) -> list[dict[str, Any]]:
        memory_id = str(params.get("memory_id") or "")
        if not memory_id:
            raise InvalidArgument("memory_id is required for lineage", field="memory_id")
        async with self._pool.connection() as conn:
            start = await memories.get(conn, memory_id)
            if start is None:
                raise NotFound(f"memory {memory_id} not found", field="memory_id")
            chain = [start]
            back = start
            cond, scope_params = scope.sql_filter()
            for _ in range(LINEAGE_DEPTH):
                prev = await (
                    await conn.execute(
                        f"{memories.SELECT_MEMORY} WHERE m.superseded_by = %s AND {cond} "
                        "ORDER BY m.created_at DESC LIMIT 1",
                        (back["id"], *scope_params),
                    )
                ).fetchone()
                if prev is None or any(c["id"] == prev["id"] for c in chain):
                    break
                chain.insert(0, prev)
                back = prev
            forward = start
            for _ in range(LINEAGE_DEPTH):
                nxt_id = forward.get("superseded_by")
                if not nxt_id or any(c["id"] == nxt_id for c in chain):
                    break
                nxt = await memories.get(conn, nxt_id)
                if nxt is None:
                    break
                chain.append(nxt)
                forward = nxt
        return [brief(r) for r in chain]

    async def temporal_stats(self, namespace: str | None, params: Params) -> dict[str, Any]:
        tz = zone(params)
        async with self._pool.connection() as conn:
            rows = await (
                await conn.execute(
                    """
                    SELECT (created_at AT TIME ZONE %(tz)s)::date AS day, count(*) AS n
                      FROM memories
                     WHERE is_active AND parent_id IS NULL
                       AND (%(ns)s::text IS NULL OR namespace = %(ns)s)
                     GROUP BY 1 ORDER BY 1
                    """,
                    {"tz": tz.key, "ns": namespace},
                )
            ).fetchall()
        if not rows:
            return {
                "total_days": 0,
                "avg_per_day": 0.0,
                "most_active_day": None,
                "most_active_count": 0,
                "streak_current": 0,
                "streak_longest": 0,
            }
        busiest = max(rows, key=lambda r: (int(r["n"]), r["day"]))
        current, longest = streaks([r["day"] for r in rows], datetime.now(tz).date())
        total = sum(int(r["n"]) for r in rows)
        return {
            "total_days": len(rows),
            "avg_per_day": round(total / len(rows), 2),
            "most_active_day": busiest["day"].isoformat(),
            "most_active_count": int(busiest["n"]),
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
        scope = {"ns": namespace, "after": after, "before": before}
        where = """m.is_active AND (%(ns)s::text IS NULL OR m.namespace = %(ns)s)
                   AND (%(after)s::timestamptz IS NULL OR m.created_at >= %(after)s)
                   AND (%(before)s::timestamptz IS NULL OR m.created_at < %(before)s)"""

        def tagged(tag: str) -> str:
            return (
                f"{memories.SELECT_MEMORY} WHERE {where} AND EXISTS (SELECT 1 FROM memory_tags t "
                f"WHERE t.memory_id = m.id AND t.tag = '{tag}') ORDER BY m.created_at"
            )

        async with self._pool.connection() as conn:
            epochs = await (await conn.execute(tagged("epoch"), scope)).fetchall()
            themes = await (await conn.execute(tagged("narrative"), scope)).fetchall()
            linked_rows = await (
                await conn.execute(
                    "SELECT source_id, target_id FROM memory_links WHERE link_type = 'elaborates'"
                    " AND (source_id = ANY(%(ids)s) OR target_id = ANY(%(ids)s))",
                    {"ids": [r["id"] for r in epochs + themes]},
                )
            ).fetchall()
            linked = {r["source_id"] for r in linked_rows} | {r["target_id"] for r in linked_rows}
            theme_out = []
            for theme in themes:
                episodes = await (
                    await conn.execute(
                        f"""{memories.SELECT_MEMORY}
                            WHERE m.is_active AND NOT m.is_metadata AND m.parent_id IS NULL
                              AND m.namespace = %(ns)s
                              AND m.created_at >= %(start)s AND m.created_at < %(end)s
                              AND NOT EXISTS (SELECT 1 FROM memory_tags t WHERE
                                  t.memory_id = m.id AND t.tag IN ('epoch', 'narrative'))
                            ORDER BY m.importance DESC, m.created_at DESC LIMIT %(n)s""",
                        {
                            "ns": theme["namespace"],
                            "start": theme["created_at"] - timedelta(days=7),
                            "end": theme["created_at"],
                            "n": max_episodes,
                        },
                    )
                ).fetchall()
                theme_out.append(
                    {
                        **brief(theme),
                        "month": theme["created_at"].astimezone(tz).strftime("%Y-%m"),
                        "linked": theme["id"] in linked,
                        "episodes": [brief(e) for e in episodes],
                    }
                )
        epoch_out = []
        epoch_months: set[str] = set()
        for epoch in epochs:
            m = epoch["created_at"].astimezone(tz).strftime("%Y-%m")
            epoch_months.add(m)
            epoch_out.append(
                {
                    **brief(epoch),
                    "month": m,
                    "linked": epoch["id"] in linked,
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
