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

* **Coherence.** Arrival order is worth something only where the memory stored next goes on
  with the same subject, as turns of a conversation and notes of a working session do. The
  stored vectors tell: across the seeds, the cosine between a seed and the memories stored
  beside it is compared with the cosine between that seed and the memories stored beside the
  other seeds (``coherence``): pooled over the seeds, less one standard error of the
  difference, and for each seed alone, less three (a few pairs only), the larger counting for
  that seed. In a stream of unrelated notes, or turns stored in no particular order, the two
  are alike and a seed passes nothing; its share grows with the difference and is whole from
  ``search.neighbour_coherence_full`` (0.02) on.
* **Never past the seed.** A neighbour's credit lifts it at most to just below the best seed
  that credits it (``CEILING`` of that seed's own fused score): the memory the indexes found
  stays ahead of the memories that are there only for being stored beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from exocortex.core.domain.vectors import Vector
from exocortex.core.records import MemoryRecord
from exocortex.indexes.base import IndexFilter
from exocortex.retrieval.search.scoring import setting_float

# Seed id → its arrival neighbours as (id, distance), nearest first.
Found = dict[str, list[tuple[str, int]]]

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


def id_window(seed: str, gap: timedelta) -> tuple[str, str] | None:
    """The lowest and highest ULID stored within ``gap`` of ``seed`` (None: not a ULID)."""
    at = _millis(seed)
    if at is None:
        return None
    span = int(gap.total_seconds() * 1000)
    low, high = max(0, at - span), min(_MAX_MILLIS, at + span)
    random_chars = _ULID_CHARS - _TIME_CHARS
    return _time_prefix(low) + "0" * random_chars, _time_prefix(high) + "Z" * random_chars


# A neighbour reaches at most this share of the own fused score of the best seed crediting it.
CEILING = 0.95


@dataclass(frozen=True)
class NeighbourSettings:
    weight: float = 0.5
    window: int = 2
    max_gap: timedelta = timedelta(minutes=30)
    # The coherence from which on the full weight applies, below it the weight in proportion
    # (0: no coherence asked, the full weight always).
    coherence_full: float = 0.02

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> NeighbourSettings:
        return cls(
            weight=max(0.0, setting_float(s, "scoring.neighbour_weight", 0.5)),
            window=max(0, min(10, int(setting_float(s, "search.neighbour_window", 2)))),
            max_gap=timedelta(
                minutes=max(0.0, setting_float(s, "search.neighbour_max_gap_minutes", 30))
            ),
            coherence_full=max(
                0.0, min(1.0, setting_float(s, "search.neighbour_coherence_full", 0.02))
            ),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0 and self.window > 0


def id_windows(seeds: Sequence[str], cfg: NeighbourSettings) -> dict[str, tuple[str, str]]:
    """Each seed's arrival window as an id range (seeds that are not ULIDs have none)."""
    return {seed: w for seed in seeds if (w := id_window(seed, cfg.max_gap)) is not None}


def group(rows: Iterable[tuple[str, int, str]]) -> Found:
    """(seed, side, id) rows, -1 before the seed and 1 after it, as ``Found``: nearest first,
    the distance counted on each side."""
    sides: dict[tuple[str, int], list[str]] = {}
    for seed, side, memory_id in rows:
        sides.setdefault((seed, side), []).append(memory_id)
    out: Found = {}
    for (seed, side), ids in sides.items():
        ids.sort(reverse=side < 0)  # nearest first on either side
        out.setdefault(seed, []).extend((i, distance) for distance, i in enumerate(ids, 1))
    for found in out.values():
        found.sort(key=lambda pair: pair[1])
    return out


@dataclass(frozen=True)
class Coherence:
    """How much more alike seeds are to the memories stored beside them than to those stored
    beside the other seeds (cosines): over all the seeds, and for each seed on its own."""

    overall: float
    per_seed: dict[str, float]

    def of(self, seed: str) -> float:
        return max(self.overall, self.per_seed.get(seed, 0.0))


# Standard errors the difference must exceed to count: pooled over every seed, and for one seed
# alone (a few pairs, and twenty seeds a search: at two, turns stored in random order still
# passed credit often enough to cost a point of recall@5 on the tuning conversations).
_OVERALL_ERRORS, _SEED_ERRORS = 1.0, 3.0


def _excess(adjacent: Vector, other: Vector, errors: float, spread: float | None = None) -> float:
    """The difference of the means less ``errors`` standard errors; ``spread`` is the variance
    to assume for both (a seed's two or four pairs cannot estimate their own)."""
    if adjacent.size < 1 or other.size < 2 or (spread is None and adjacent.size < 2):
        return 0.0
    var_adjacent = spread if spread is not None else float(adjacent.var(ddof=1))
    var_other = spread if spread is not None else float(other.var(ddof=1))
    error = math.sqrt(var_adjacent / adjacent.size + var_other / other.size)
    return max(0.0, float(adjacent.mean() - other.mean()) - errors * error)


def coherence(found: Mapping[str, list[tuple[str, int]]], vecs: Mapping[str, Vector]) -> Coherence:
    """The mean cosine between seeds and the memories stored beside them less the mean cosine
    between seeds and the memories stored beside the other seeds, less its standard errors. In a
    conversation or a working session the next memory goes on with the same subject; in a
    stream of unrelated notes it is as alike as any other. Pooled over the seeds it tells a
    namespace of conversations from one of unrelated notes; per seed it finds one conversation
    among unrelated notes. 0 when nothing tells them apart."""
    seeds = [s for s in found if s in vecs]
    near_ids = sorted({n for s in seeds for n, _ in found[s] if n in vecs})
    if len(seeds) < 2 or len(near_ids) < 2:
        return Coherence(0.0, {})
    column = {n: i for i, n in enumerate(near_ids)}
    sims = np.stack([vecs[s] for s in seeds]) @ np.stack([vecs[n] for n in near_ids]).T
    beside = np.zeros(sims.shape, dtype=bool)
    itself = np.zeros(sims.shape, dtype=bool)
    for row, seed in enumerate(seeds):
        for memory_id, _ in found[seed]:
            if memory_id in column:
                beside[row, column[memory_id]] = True
        if seed in column:
            itself[row, column[seed]] = True
    other = ~beside & ~itself
    if other.sum() < 2:
        return Coherence(0.0, {})
    spread = float(sims[other].var(ddof=1))
    per_seed = _seed_excess(seeds, sims, beside, other, spread)
    return Coherence(_excess(sims[beside], sims[other], _OVERALL_ERRORS), per_seed)


def _seed_excess(
    seeds: list[str],
    sims: npt.NDArray[np.float32],
    beside: npt.NDArray[np.bool_],
    other: npt.NDArray[np.bool_],
    spread: float,
) -> dict[str, float]:
    """``_excess`` of each seed's row (its neighbours against the other seeds' neighbours,
    with the pooled ``spread``): the same float32 sums and means, taken with ``np.add.reduce``
    instead of ``ndarray.mean``, whose Python wrapper cost more than the sums of a few values
    (twenty seeds, two means each, every search)."""
    out: dict[str, float] = {}
    for row, seed in enumerate(seeds):
        adjacent, others = sims[row][beside[row]], sims[row][other[row]]
        if adjacent.size < 1 or others.size < 2:
            out[seed] = 0.0
            continue
        error = math.sqrt(spread / adjacent.size + spread / others.size)
        mean_adjacent = np.add.reduce(adjacent) / adjacent.size
        mean_others = np.add.reduce(others) / others.size
        out[seed] = max(0.0, float(mean_adjacent - mean_others) - _SEED_ERRORS * error)
    return out


@dataclass
class Credit:
    """What a memory's seeds pass on: the sum, and the most it may lift the memory to."""

    value: float = 0.0
    ceiling: float = 0.0


def bonuses(
    found: Mapping[str, list[tuple[str, int]]],
    seed_scores: Mapping[str, float],
    weight: float,
    shares: Mapping[str, float] | None = None,
) -> dict[str, Credit]:
    """Neighbour id → the score its seeds pass on (weight × the seed's share × its score ÷
    distance, summed; a seed not in ``shares`` passes nothing, all pass in full without them),
    and its ceiling (``CEILING`` × the best crediting seed's score)."""
    out: dict[str, Credit] = {}
    for seed, neighbours in found.items():
        score = seed_scores.get(seed)
        share = 1.0 if shares is None else shares.get(seed, 0.0)
        if not score or share <= 0:
            continue
        for memory_id, distance in neighbours:
            credit = out.setdefault(memory_id, Credit())
            credit.value += weight * share * score / max(1, distance)
            credit.ceiling = max(credit.ceiling, CEILING * score)
    return out


def lifted(own: float, credit: Credit) -> float:
    """A memory's fused score with its neighbours' credit: never past the ceiling, never below
    what the indexes gave it."""
    return max(own, min(own + credit.value, credit.ceiling))


def passes(memory: MemoryRecord, flt: IndexFilter, now: datetime) -> bool:
    """Whether a memory the indexes did not return meets the search's filters (the indexes
    apply them to their own hits)."""
    if not memory.is_live(now):
        return False
    if flt.tags_any and not set(flt.tags_any).intersection(memory.tags):
        return False
    if flt.content_type is not None and memory.content_type != flt.content_type:
        return False
    if flt.source is not None and memory.source != flt.source:
        return False
    created = memory.created_at
    if flt.created_after is not None and created < flt.created_after:
        return False
    if flt.created_before is not None and created >= flt.created_before:
        return False
    if flt.min_importance is not None and float(memory.importance) < flt.min_importance:
        return False
    if flt.exclude_metadata and memory.is_metadata:
        return False
    return memory.id not in flt.exclude_ids
