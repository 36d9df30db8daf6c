"""Late-interaction re-scoring of the head of the ranking (the best 20 by default).

The vectors the indexes search are one per memory: every word of it averaged into one point. The
model's token vectors keep each word apart, and a memory whose words match the query's words one
by one (MaxSim: each query token's best match, averaged) can be told from one that is only about
the same thing. With ``search.rerank_candidates`` > 0 the best that many results are ordered
again by reciprocal rank fusion of their order so far and their MaxSim order
(``scoring.rerank_weight``, k 5). The head's scores are handed out again in the new order, so
results stay sorted by score.

The memories' token vectors are made once, by the embedding service in the same run of the model
that makes their vector, and kept next to them in Postgres (int8, ``memory_tokens``); search
reads the head's in one statement. The query's come from the run that made its vector in this
process. Memories that keep none (stored before they were kept, chunked) are encoded here, and
all are cached by id and version. Measured on LoCoMo and for its cost in
docs/benchmarks/locomo.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from exocortex.core.domain.token_vectors import Packed
from exocortex.retrieval.search.scoring import setting_float

Tokens = npt.NDArray[np.float32]
RRF_K = 5.0


def _int(s: Mapping[str, str], key: str, default: int, lo: int, hi: int) -> int:
    try:
        return min(hi, max(lo, int(float(s.get(key, default)))))
    except ValueError:
        return default


def _float(s: Mapping[str, str], key: str, default: float) -> float:
    """Non-negative (a negative value means the default)."""
    value = setting_float(s, key, default)
    return value if value >= 0 else default


@dataclass(frozen=True)
class RerankSettings:
    candidates: int = 20
    weight: float = 0.5

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> RerankSettings:
        return cls(
            candidates=_int(s, "search.rerank_candidates", 20, 0, 100),
            weight=_float(s, "scoring.rerank_weight", 0.5),
        )

    @property
    def enabled(self) -> bool:
        return self.candidates > 1 and self.weight > 0


def maxsim(query: Tokens, memory: Packed) -> float:
    """The mean over the query's tokens (unit rows) of each one's best cosine among the
    memory's tokens."""
    if query.size == 0 or memory.rows.size == 0:
        return 0.0
    return float(memory.cosines(query).max(axis=1).mean())


def reorder(head: Sequence[str], similarity: Mapping[str, float], weight: float) -> list[str]:
    """``head`` (best first) fused with its order by ``similarity`` (MaxSim), by reciprocal
    rank: the order so far at weight 1, the MaxSim order at ``weight``. Ties keep ``head``'s
    order; a memory without a similarity keeps only its first share."""
    by_similarity = sorted((i for i in head if i in similarity), key=lambda i: -similarity[i])
    fused = {memory_id: 1.0 / (RRF_K + rank) for rank, memory_id in enumerate(head, 1)}
    for rank, memory_id in enumerate(by_similarity, 1):
        fused[memory_id] += weight / (RRF_K + rank)
    position = {memory_id: n for n, memory_id in enumerate(head)}
    return sorted(head, key=lambda i: (-fused[i], position[i]))
