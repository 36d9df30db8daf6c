"""Dense pseudo-relevance feedback (Rocchio): one more vector search, for the query moved toward
its first hits, fused as one more ranked list.

A question whose answer is spread over several memories ("what do X and Y have in common",
"what might X enjoy") often shares its words and meaning with one of them only; the others are
about the same subject in other words. The best ``search.feedback_seeds`` fused candidates (what
the vector and keyword indexes agree on first) say what the subject is in this store's own
words: the query's vector plus ``search.feedback_mix`` × the mean of their stored vectors,
normalised, is searched in the vector index again (with the search's filters), and that list is
fused with ``scoring.feedback_weight`` beside the vector and keyword lists. It can add memories
the first searches did not return. Only the stored vectors and the query count: nothing about
how the memories were written.

The search runs beside the rows, the graph and the neighbours (it needs only the fused
candidates' ids and the query's vector), so it adds one vector search and one small read to a
search's work, not to its time in sequence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search.scoring import setting_float


@dataclass(frozen=True)
class FeedbackSettings:
    weight: float = 0.0
    seeds: int = 3
    mix: float = 1.0

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> FeedbackSettings:
        return cls(
            weight=max(0.0, setting_float(s, "scoring.feedback_weight", 0.0)),
            seeds=max(0, min(20, int(setting_float(s, "search.feedback_seeds", 3)))),
            mix=max(0.0, min(10.0, setting_float(s, "search.feedback_mix", 1.0))),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0 and self.seeds > 0 and self.mix > 0


def moved_query(query: Vector, seeds: Sequence[Vector], mix: float) -> Vector | None:
    """The unit vector of ``query`` + ``mix`` × the mean of the ``seeds`` (each of unit length);
    None without seeds or when the sum vanishes."""
    if not seeds:
        return None
    mean = np.mean(np.stack([np.asarray(v, dtype=np.float32) for v in seeds]), axis=0)
    moved = np.asarray(query, dtype=np.float32) + np.float32(mix) * mean
    norm = float(np.linalg.norm(moved))
    if not np.isfinite(norm) or norm <= 0:
        return None
    out: Vector = (moved / norm).astype(np.float32)
    return out
