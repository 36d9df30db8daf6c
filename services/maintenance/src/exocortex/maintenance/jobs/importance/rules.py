"""The importance rules, on one memory's signals (pure: no I/O).

* Boost: used at least ``boost_threshold`` times since the last boost (ever, for the first),
  importance under 0.8: +0.10 when it was also found useful, else +0.05, capped at 0.9.
* Decay: never accessed nor found useful, older than ``decay_age_days`` and not decayed within
  that many days, importance above 0.3: -0.05, floored at 0.1.
* Graph: mentions one of the namespace's most connected entities: +0.05 (cap 0.9), once.
* Pinned memories (importance 1.0) are never touched.

Each rule remembers what it applied (see the marks), so a second run in a row changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from exocortex.maintenance.jobs.importance.repository import Signals

BOOST_CEILING = 0.8
CAP = 0.9
DECAY_FLOOR_ABOVE = 0.3
FLOOR = 0.1


@dataclass(frozen=True, slots=True)
class Change:
    id: str
    action: str  # boost | decay | graph
    old: float
    new: float


def pinned(importance: float) -> bool:
    return round(importance, 2) >= 1.0


def decide(
    s: Signals, *, boost_threshold: int, decay_age_days: int, graph: bool, now: datetime
) -> list[Change]:
    if pinned(s.importance):
        return []
    changes: list[Change] = []
    value = s.importance
    since_boost = s.access_count - (s.boosted_at_access or 0)
    if (
        s.access_count >= boost_threshold
        and since_boost >= boost_threshold
        and value < BOOST_CEILING
    ):
        new = min(CAP, round(value + (0.10 if s.useful_count > 0 else 0.05), 4))
        changes.append(Change(s.id, "boost", value, new))
        value = new
    age = timedelta(days=decay_age_days)
    if (
        s.access_count == 0
        and s.useful_count == 0
        and s.created_at < now - age
        and (s.decayed_at is None or s.decayed_at < now - age)
        and value > DECAY_FLOOR_ABOVE
    ):
        new = max(FLOOR, round(value - 0.05, 4))
        changes.append(Change(s.id, "decay", value, new))
        value = new
    if graph and s.central and not s.graph_boosted and value < CAP:
        new = min(CAP, round(value + 0.05, 4))
        changes.append(Change(s.id, "graph", value, new))
    return changes
