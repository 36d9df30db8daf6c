"""Coverage-aware ordering of the head of the ranking (off by default).

A question whose answer is spread over several memories needs each of them among the first
results, not several memories that say nearly the same thing as the best one. With
``scoring.coverage_weight`` > 0 the best ``HEAD`` results are picked again one by one (maximal
marginal relevance): each next pick is the memory with the highest relevance (its score over the
best score) less the weight × how much it repeats a memory already picked. Repetition is the
cosine of the stored vectors above ``search.coverage_similarity``, scaled to 0..1: below it two
memories are about different things and neither holds the other back; a near copy counts in
full. A memory without a stored vector repeats nothing.

The vectors are mostly at hand: the arrival neighbours' coherence has already read those of the
best twenty candidates and of the memories stored beside them; the others of the head are read
in one statement. The head's scores are handed out again in the new order, so results stay
sorted by score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from exocortex.core.db.pool import Pool
from exocortex.core.domain.vectors import Vector
from exocortex.core.logging import get_logger
from exocortex.retrieval.search import repository
from exocortex.retrieval.search.results import ScoredMemory
from exocortex.retrieval.search.scoring import setting_float

log = get_logger(__name__)

# Results picked again: past the usual page (10) and the deepest page measured (25), so a memory
# a little further down can take the place of a repetition.
HEAD = 30
DEFAULT_WEIGHT = 0.0
DEFAULT_SIMILARITY = 0.5


def _float(s: Mapping[str, str], key: str, default: float, hi: float) -> float:
    """Between 0 and ``hi`` (a negative value means the default)."""
    value = setting_float(s, key, default)
    return min(hi, value) if value >= 0 else default


@dataclass(frozen=True)
class CoverageSettings:
    weight: float = DEFAULT_WEIGHT
    # The cosine from which one memory starts to repeat another.
    similarity: float = DEFAULT_SIMILARITY

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> CoverageSettings:
        return cls(
            weight=_float(s, "scoring.coverage_weight", DEFAULT_WEIGHT, 10.0),
            similarity=_float(s, "search.coverage_similarity", DEFAULT_SIMILARITY, 0.99),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0


def reorder(
    head: Sequence[str],
    scores: Mapping[str, float],
    vectors: Mapping[str, Vector],
    weight: float,
    similarity: float,
) -> list[str]:
    """``head`` (best first) picked again greedily: the next is the one with the highest
    ``score / best score − weight × repetition``, repetition being its largest
    ``(cosine − similarity) / (1 − similarity)`` (at least 0) with a memory picked before it.
    ``vectors`` are of unit length; ties keep ``head``'s order."""
    if len(head) < 2 or weight <= 0:
        return list(head)
    best = max(scores[i] for i in head)
    relevance = np.array([scores[i] / best if best > 0 else 0.0 for i in head])
    with_vector = [n for n, i in enumerate(head) if i in vectors]
    overlap = np.zeros((len(head), len(head)))
    if len(with_vector) > 1:
        matrix = np.stack([np.asarray(vectors[head[n]], dtype=np.float64) for n in with_vector])
        cosines = matrix @ matrix.T
        excess = np.clip((cosines - similarity) / (1.0 - similarity), 0.0, 1.0)
        overlap[np.ix_(with_vector, with_vector)] = excess
    repeated = np.zeros(len(head))
    left = list(range(len(head)))
    order: list[str] = []
    while left:
        # The first of the highest (argmax keeps the earliest): ties keep the order so far.
        gains = relevance[left] - weight * repeated[left]
        pick = left.pop(int(np.argmax(gains)))
        order.append(head[pick])
        repeated = np.maximum(repeated, overlap[pick])
    return order


async def diversified(
    pool: Pool,
    scored: list[ScoredMemory],
    known: Mapping[str, Vector],
    cfg: CoverageSettings,
) -> list[ScoredMemory]:
    """``scored`` (sorted, best first) with its head ordered by ``reorder``. ``known``: unit
    vectors already read for this search; the head's others are read here. As it was when
    they cannot be read: coverage only reorders, a search never fails on it."""
    head = scored[:HEAD]
    vectors = {s.memory.id: known[s.memory.id] for s in head if s.memory.id in known}
    missing = [s.memory.id for s in head if s.memory.id not in vectors]
    if missing:
        try:
            async with pool.connection() as conn:
                # Read as seeds without neighbours: the same statement, unit vectors back.
                vectors.update(await repository.vectors(conn, {i: [] for i in missing}))
        except Exception as exc:
            log.warning("stored vectors unavailable; order kept", error=str(exc))
            return scored
    order = reorder(
        [s.memory.id for s in head],
        {s.memory.id: s.score for s in head},
        vectors,
        cfg.weight,
        cfg.similarity,
    )
    by_id = {s.memory.id: s for s in head}
    for memory_id, score in zip(order, [s.score for s in head], strict=True):
        by_id[memory_id].score = score
    return [by_id[i] for i in order] + scored[HEAD:]
