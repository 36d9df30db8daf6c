"""Arrival neighbours: memories stored just before or after a strong hit share its context.

An agent stores a conversation turn by turn and a working session note by note. The answer to a
question is often the turn *next to* the one that names the question's subject ("Did you go?" —
"Yes, last Sunday"), which shares none of its words and little of its meaning. So the best
candidates of a search (the seeds) pass a share of their fused score to the memories stored right
next to them in the same namespace (arrival order: id order, as ids are ULIDs handed out as
memories are stored): ``scoring.neighbour_weight`` × the seed's score ÷ the distance
(1 for the adjacent memory, 2 for the one after, up to ``search.neighbour_window``). A neighbour
the indexes did not find becomes a candidate this way.

Only memories of one stretch of work are neighbours: stored no more than
``search.neighbour_max_gap_minutes`` apart, and from the same session, conversation and source
when both carry one. Memories stored in one import keep their order (it hands out increasing ids).

Two guards keep the signal from doing harm where arrival order means nothing (unrelated notes
stored one after another, turns imported in no particular order):

* **Evidence.** Arrival order is worth something only when memories about one subject were
  stored together. The best ``search.neighbour_evidence_top`` candidates of the indexes show
  whether they were: in a conversation or a working session the hits on a subject sit next to
  each other, while in a stream of unrelated notes they sit next to each other only as often as
  chance has it (the share of the namespace they make up). The weight is scaled by how far the
  observed share of top hits with another top hit beside them exceeds that chance level
  (``evidence``; beyond one standard error of chance, as the top hits are a small sample): 0 at
  or below chance, the full weight when every top hit has one. When the top hits are most of
  the namespace, nothing can be told apart from chance, and neighbours pass nothing.
* **Never past the seed.** A neighbour's credit lifts it at most to just below the best seed
  that credits it (``CEILING`` of that seed's own fused score): the memory the indexes found
  stays ahead of the memories that are there only for being stored beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from psycopg import AsyncConnection

from exocortex.core.db.arrays import TextArray
from exocortex.core.indexes.base import IndexFilter

Row = dict[str, Any]
# Seed id → its arrival neighbours as (id, distance), nearest first.
Found = dict[str, list[tuple[str, int]]]

# Either side of each seed, within its arrival window, nearest first. Ids are ULIDs: their order
# is arrival order (an import hands out increasing ids), and a time bound is an id bound, so each
# side is one short range scan of the partial index ix_memories_namespace_root_id.
# The window is written into the statement, not bound: with LIMIT a parameter, the generic plan
# guessed 50 rows a side and read far more (50 ms at 100k), so Postgres planned the
# statement afresh on every search (0.7 ms). With a literal its one generic plan is the right
# one (a handful of statements, one per window setting). The neighbours' namespace is the seed's
# column for the same reason: the index bounds then never depend on a parameter.
_NEIGHBOURS_SQL = """
SELECT w.seed, n.id, n.side
  FROM unnest(%(seeds)s::text[], %(lows)s::text[], %(highs)s::text[]) AS w(seed, low, high)
  JOIN memories s ON s.id = w.seed AND (%(ns)s::text IS NULL OR s.namespace = %(ns)s)
 CROSS JOIN LATERAL (
    (SELECT m.id, -1 AS side
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND m.id < w.seed AND m.id >= w.low
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
        AND (s.source IS NULL OR m.source IS NULL OR m.source = s.source)
      ORDER BY m.id DESC
      LIMIT {window})
    UNION ALL
    (SELECT m.id, 1
       FROM memories m
      WHERE m.namespace = s.namespace AND m.parent_id IS NULL AND m.is_active
        AND m.id > w.seed AND m.id <= w.high
        AND (s.session_id IS NULL OR m.session_id IS NULL OR m.session_id = s.session_id)
        AND (s.conversation_id IS NULL OR m.conversation_id IS NULL
             OR m.conversation_id = s.conversation_id)
        AND (s.source IS NULL OR m.source IS NULL OR m.source = s.source)
      ORDER BY m.id
      LIMIT {window})
 ) n
"""
# A ULID is 26 Crockford base-32 characters: 10 for a 48-bit millisecond timestamp, then 16
# for 80 random bits. Ids of one millisecond sort between <time>000… and <time>ZZZ…, so a time
# window is an id range. Worked out on the strings (twenty seeds a search, kept cheap).
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DIGIT = {ch: i for i, ch in enumerate(_CROCKFORD)}
_TIME_CHARS, _ULID_CHARS, _MAX_MILLIS = 10, 26, (1 << 48) - 1


def _millis(ulid: str) -> int | None:
    if len(ulid) != _ULID_CHARS:
        return None
    value = 0
    for ch in ulid[:_TIME_CHARS]:
        digit = _DIGIT.get(ch)
        if digit is None:
            return None
        value = value * 32 + digit
    return value if value <= _MAX_MILLIS else None


def _time_prefix(millis: int) -> str:
    chars = []
    for _ in range(_TIME_CHARS):
        chars.append(_CROCKFORD[millis & 31])
        millis >>= 5
    return "".join(reversed(chars))


def _id_window(seed: str, gap: timedelta) -> tuple[str, str] | None:
    """The lowest and highest ULID stored within ``gap`` of ``seed`` (None: not a ULID)."""
    at = _millis(seed)
    if at is None:
        return None
    span = int(gap.total_seconds() * 1000)
    low, high = max(0, at - span), min(_MAX_MILLIS, at + span)
    random_chars = _ULID_CHARS - _TIME_CHARS
    return _time_prefix(low) + "0" * random_chars, _time_prefix(high) + "Z" * random_chars


def _float(s: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(s.get(key, default))
    except ValueError:
        return default


# A neighbour reaches at most this share of the own fused score of the best seed crediting it.
CEILING = 0.95


@dataclass(frozen=True)
class NeighbourSettings:
    weight: float = 0.3
    window: int = 2
    max_gap: timedelta = timedelta(minutes=30)
    # Top candidates the evidence is read from (0: no evidence asked, the full weight always).
    evidence_top: int = 10
    # The evidence from which on the full weight applies (below it, the weight in proportion).
    evidence_full: float = 0.2

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> NeighbourSettings:
        return cls(
            weight=max(0.0, _float(s, "scoring.neighbour_weight", 0.3)),
            window=max(0, min(10, int(_float(s, "search.neighbour_window", 2)))),
            max_gap=timedelta(minutes=max(0.0, _float(s, "search.neighbour_max_gap_minutes", 30))),
            evidence_top=max(0, min(20, int(_float(s, "search.neighbour_evidence_top", 10)))),
            evidence_full=max(0.01, min(1.0, _float(s, "search.neighbour_evidence_full", 0.2))),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0 and self.window > 0


async def around(
    conn: AsyncConnection[Row],
    namespace: str | None,
    seeds: Sequence[str],
    cfg: NeighbourSettings,
) -> Found:
    """The seeds' arrival neighbours (see Found)."""
    windows = {seed: w for seed in seeds if (w := _id_window(seed, cfg.max_gap)) is not None}
    if not windows or not cfg.enabled:
        return {}
    params: dict[str, Any] = {
        "seeds": TextArray(windows),
        "lows": TextArray(w[0] for w in windows.values()),
        "highs": TextArray(w[1] for w in windows.values()),
        "ns": namespace,
    }
    cur = await conn.execute(_NEIGHBOURS_SQL.format(window=int(cfg.window)), params)
    sides: dict[tuple[str, int], list[str]] = {}
    for row in await cur.fetchall():
        sides.setdefault((row["seed"], int(row["side"])), []).append(row["id"])
    out: Found = {}
    for (seed, side), ids in sides.items():
        ids.sort(reverse=side < 0)  # nearest first on either side
        out.setdefault(seed, []).extend((i, distance) for distance, i in enumerate(ids, 1))
    for found in out.values():
        found.sort(key=lambda pair: pair[1])
    return out


def evidence(found: Mapping[str, list[tuple[str, int]]], top: Sequence[str], roots: int) -> float:
    """How much arrival order says about this search, 0..1: the share of the ``top`` candidates
    with another top candidate among their arrival neighbours, above the share chance gives
    (``roots`` memories in the namespace, of which the top ones are a random pick), as a
    fraction of the room above chance. 0 when the top candidates are most of the namespace."""
    chosen = set(top)
    if len(chosen) < 2 or roots <= len(chosen):
        return 0.0
    # The chance that a given other memory is one of the top candidates.
    share = (len(chosen) - 1) / (roots - 1)
    seen = observed = expected = 0.0
    for memory_id in chosen:
        near = found.get(memory_id)
        if not near:
            continue  # nothing stored beside it in its stretch of work: no say either way
        seen += 1
        observed += any(other in chosen for other, _ in near)
        expected += 1.0 - (1.0 - share) ** len(near)
    if not seen:
        return 0.0
    observed, expected = observed / seen, expected / seen
    if expected >= 1.0:
        return 0.0
    # A handful of top hits is a small sample: only the excess beyond one standard error of
    # the chance share counts, so a stream of unrelated notes does not earn credit by luck.
    noise = math.sqrt(expected * (1.0 - expected) / seen)
    return max(0.0, min(1.0, (observed - expected - noise) / (1.0 - expected)))


@dataclass
class Credit:
    """What a memory's seeds pass on: the sum, and the most it may lift the memory to."""

    value: float = 0.0
    ceiling: float = 0.0


def bonuses(
    found: Mapping[str, list[tuple[str, int]]], seed_scores: Mapping[str, float], weight: float
) -> dict[str, Credit]:
    """Neighbour id → the score its seeds pass on (weight × seed score ÷ distance, summed), and
    its ceiling (``CEILING`` × the best crediting seed's score)."""
    out: dict[str, Credit] = {}
    for seed, neighbours in found.items():
        score = seed_scores.get(seed)
        if not score:
            continue
        for memory_id, distance in neighbours:
            credit = out.setdefault(memory_id, Credit())
            credit.value += weight * score / max(1, distance)
            credit.ceiling = max(credit.ceiling, CEILING * score)
    return out


def lifted(own: float, credit: Credit) -> float:
    """A memory's fused score with its neighbours' credit: never past the ceiling, never below
    what the indexes gave it."""
    return max(own, min(own + credit.value, credit.ceiling))


def passes(row: Row, flt: IndexFilter, now: datetime) -> bool:
    """Whether a memory the indexes did not return meets the search's filters (the indexes
    apply them to their own hits)."""
    expires = row.get("expires_at")
    if not row["is_active"] or (expires is not None and expires <= now):
        return False
    if flt.tags_any and not set(flt.tags_any).intersection(row["tags"]):
        return False
    if flt.content_type is not None and row["content_type"] != flt.content_type:
        return False
    if flt.source is not None and row["source"] != flt.source:
        return False
    created = row["created_at"]
    if flt.created_after is not None and created < flt.created_after:
        return False
    if flt.created_before is not None and created >= flt.created_before:
        return False
    if flt.min_importance is not None and float(row["importance"]) < flt.min_importance:
        return False
    if flt.exclude_metadata and row["is_metadata"]:
        return False
    return row["id"] not in flt.exclude_ids
