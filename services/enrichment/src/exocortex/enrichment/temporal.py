"""Temporal auto-links (the seed's store-time step 21): a summary memory is linked to the
memories it summarises, so the timeline hierarchy (epoch → narrative → episode) can be walked.

* A ``narrative`` tagged ``weekly-summary`` elaborates on up to 15 episodes from the 7 days
  before it; one tagged ``epoch`` on up to 30 from the 31 days before it. Episodes are active,
  non-metadata root memories of the same namespace with importance ≥ 0.5, most important first,
  and are not themselves summaries (no ``epoch`` or ``narrative`` tag). Strength 0.6.
* An epoch also elaborates on the narratives of its calendar month (UTC), strength 0.8.

Links go through ``links.insert_missing``: re-processing never duplicates or overwrites one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from exocortex.core.db.pool import DictConnection
from exocortex.core.records import MemoryRecord
from exocortex.enrichment import repository

NARRATIVE = "narrative"
EPOCH = "epoch"
WEEKLY = "weekly-summary"
EPISODE_STRENGTH = 0.6
NARRATIVE_STRENGTH = 0.8
MIN_EPISODE_IMPORTANCE = 0.5


@dataclass(frozen=True)
class Window:
    days: int
    cap: int
    epoch: bool


WEEKLY_WINDOW = Window(days=7, cap=15, epoch=False)
EPOCH_WINDOW = Window(days=31, cap=30, epoch=True)


def window_for(tags: Iterable[str]) -> Window | None:
    """Only narratives are summaries; an epoch narrative takes the wider window."""
    tagset = set(tags)
    if NARRATIVE not in tagset:
        return None
    if EPOCH in tagset:
        return EPOCH_WINDOW
    if WEEKLY in tagset:
        return WEEKLY_WINDOW
    return None


def month_bounds(moment: datetime) -> tuple[datetime, datetime]:
    """The UTC calendar month containing ``moment``: [first instant, first of next month)."""
    start = moment.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    following = (start + timedelta(days=32)).replace(day=1)
    return start, following


async def temporal_links(
    conn: DictConnection, row: MemoryRecord
) -> list[tuple[str, str, str, float]]:
    """The (source, target, type, strength) links a summary memory should have; [] otherwise."""
    window = window_for(row.tags)
    if window is None:
        return []
    created = row.created_at
    episodes = await repository.episodes(
        conn,
        row.namespace,
        row.id,
        min_importance=MIN_EPISODE_IMPORTANCE,
        since=created - timedelta(days=window.days),
        until=created,
        cap=window.cap,
    )
    out = [(row.id, e, "elaborates", EPISODE_STRENGTH) for e in episodes]
    if window.epoch:
        since, until = month_bounds(created)
        narratives = await repository.narratives(
            conn, row.namespace, row.id, since=since, until=until, cap=window.cap
        )
        out += [(row.id, n, "elaborates", NARRATIVE_STRENGTH) for n in narratives]
    return out
