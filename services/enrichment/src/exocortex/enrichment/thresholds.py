"""The worker's tunable thresholds, read from the ``settings`` table (``enrichment.*``) on every
memory through the settings cache, so a PATCH /api/settings takes effect within seconds.

A missing or unparsable value falls back to the default below (the value migration 0003 seeds),
and every value is clamped to a sane range: a typo must not stop enrichment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from exocortex.core.domain.contradictions import NEGATION_OVERLAP
from exocortex.core.domain.entities import min_confidence
from exocortex.core.domain.setting_values import clamped_float


def _int(settings: Mapping[str, str], key: str, default: int, lo: int, hi: int) -> int:
    return int(clamped_float(settings, key, default, lo, hi))


@dataclass(frozen=True)
class Thresholds:
    # Entities below this heuristic confidence are dropped.
    entity_confidence: float
    # How many nearest neighbours one memory is compared with (links and contradictions).
    neighbours: int
    relation: float
    relation_limit: int
    contradiction: float
    # Share of content words a negated/non-negated sentence pair must have in common.
    negation_overlap: float
    goal: float
    # Contextual vectors: whether to make them, and how far back the previous memory of the
    # same stretch of work may lie (search's arrival-neighbour gap).
    context_vectors: bool
    context_gap: timedelta

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> Thresholds:
        return cls(
            entity_confidence=min_confidence(s),
            neighbours=_int(s, "enrichment.neighbour_limit", 10, 1, 100),
            relation=clamped_float(s, "enrichment.relation_threshold", 0.75, -1.0, 1.0),
            relation_limit=_int(s, "enrichment.relation_limit", 5, 0, 100),
            contradiction=clamped_float(s, "enrichment.contradiction_threshold", 0.7, -1.0, 1.0),
            negation_overlap=clamped_float(
                s, "enrichment.contradiction_negation_overlap", NEGATION_OVERLAP, 0.0, 1.0
            ),
            goal=clamped_float(s, "enrichment.goal_threshold", 0.55, -1.0, 1.0),
            context_vectors=s.get("enrichment.context_vectors", "false").strip().lower() == "true",
            context_gap=timedelta(
                minutes=clamped_float(s, "search.neighbour_max_gap_minutes", 30.0, 0.0, 525_600.0)
            ),
        )
