"""The vector leg re-ranked with the memories' contextual vectors.

A memory's contextual vector is its text embedded together with the memory stored just before it
in the same stretch of work (made by enrichment, see ``core.domain.context``). The vector leg
orders its candidates by the query's similarity to the memory itself plus
``scoring.context_weight`` × its similarity to the contextual vector. A memory without one (the
first of a session, a long or chunked one, one stored before they existed) counts its own
similarity twice, so a namespace without any ranks exactly as before, and a memory the context
says nothing about keeps its place.

Only the order of the leg changes; the candidates are the index's, and each keeps its own
similarity as its raw score (the score breakdown's ``vector``). Measured on LoCoMo (turns stored
in order, fused with keywords and arrival neighbours): recall@10 +1.5 points on the
conversations the weight was chosen on and +1.7 on held-out ones; stored in a random order,
where the previous turn is unrelated, within 0.3 of the plain leg (docs/benchmarks/locomo.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from exocortex.core.domain.vectors import Vector


def rerank(
    roots: Sequence[tuple[str, float]],
    contexts: Mapping[str, Vector],
    query: Vector,
    weight: float,
) -> list[tuple[str, float]]:
    """``roots`` (id, own similarity), best first by own similarity + ``weight`` × contextual
    similarity; ties keep the index's order."""
    if weight <= 0 or not contexts:
        return list(roots)
    q_norm = float(np.linalg.norm(query))
    if q_norm == 0:
        return list(roots)
    unit = query / q_norm

    def combined(item: tuple[int, tuple[str, float]]) -> tuple[float, int]:
        position, (memory_id, own) = item
        context = contexts.get(memory_id)
        near = own
        if context is not None and context.shape == unit.shape:
            norm = float(np.linalg.norm(context))
            if norm > 0:
                near = float(np.dot(context, unit)) / norm
        return (-(own + weight * near), position)

    return [root for _, root in sorted(enumerate(roots), key=combined)]
