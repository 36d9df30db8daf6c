"""One-hop expansion: memories linked to the first hits, or naming what they name, join the
candidates.

The answer to a question is sometimes spread over several memories, and only the first of them
shares the question's words or meaning ("what do X and Y have in common": one memory about X,
one about Y). The graph list (``graph``) only reorders what the indexes found; this adds what
they missed. The best few fused candidates (the seeds, ``search.expand_seeds``) pass a share of
their fused score to the memories one hop away from them:

* a memory linked to a seed (``memory_links``, either direction) by a link of strength s
  counts s;
* a memory sharing named entities with a seed counts, for each entity, 1 ÷ the number of other
  memories naming it (an entity named by the seed and one other memory counts 1, by the seed and
  nine others 0.11; entities named by more than ``MAX_MENTIONS`` memories count nothing: a name
  every memory carries tells nothing about any of them);

the larger of the two, at most 1, is the hop's strength. A memory gets
``scoring.expand_weight`` × the seed's fused score × the strength, summed over the seeds, never
past ``CEILING`` of the best crediting seed's own score (as arrival neighbours, see
``neighbours``): the memory the indexes found stays ahead of the memory that is there only for
being one hop from it. At most ``search.expand_limit`` memories the indexes did not return are
added (the best credited); a candidate they returned is lifted as well. An added memory is
answered only if it meets every filter of the search (``neighbours.passes``) and lies within
the caller's scope (its row is read by the same statement as every candidate's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from exocortex.retrieval.search.neighbours import CEILING, Credit
from exocortex.retrieval.search.scoring import setting_float

# An entity named by more memories than this links none of them.
MAX_MENTIONS = 50

LINK, ENTITY = "link", "entity"


@dataclass(frozen=True)
class HopSettings:
    weight: float = 0.0
    seeds: int = 5
    limit: int = 10

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> HopSettings:
        return cls(
            weight=max(0.0, setting_float(s, "scoring.expand_weight", 0.0)),
            seeds=max(0, min(50, int(setting_float(s, "search.expand_seeds", 5)))),
            limit=max(0, min(100, int(setting_float(s, "search.expand_limit", 10)))),
        )

    @property
    def enabled(self) -> bool:
        return self.weight > 0 and self.seeds > 0 and self.limit > 0


@dataclass(frozen=True)
class Hop:
    """One memory one hop from a seed: through a link (``value`` its strength) or through the
    entities both name (``value`` Σ 1 ÷ the other memories naming each)."""

    seed: str
    memory_id: str
    kind: str
    value: float


def strengths(hops: Iterable[Hop]) -> dict[tuple[str, str], float]:
    """(seed, memory) → the hop's strength in [0, 1]: the larger of its link's strength and its
    shared entities' rarity."""
    out: dict[tuple[str, str], float] = {}
    for hop in hops:
        if hop.memory_id == hop.seed:
            continue
        value = min(1.0, max(0.0, hop.value))
        key = (hop.seed, hop.memory_id)
        out[key] = max(out.get(key, 0.0), value)
    return out


def credits(
    hops: Iterable[Hop], seed_scores: Mapping[str, float], weight: float
) -> dict[str, Credit]:
    """Memory id → what its seeds pass on (weight × the seed's score × the hop's strength,
    summed over the seeds) and its ceiling (``CEILING`` × the best crediting seed's score). A
    seed without a score (not live, not a seed) passes nothing; seeds do not credit each other
    above what the indexes gave them (only their ceiling limits it)."""
    out: dict[str, Credit] = {}
    if weight <= 0:
        return out
    for (seed, memory_id), strength in strengths(hops).items():
        score = seed_scores.get(seed)
        if not score or score <= 0 or strength <= 0:
            continue
        credit = out.setdefault(memory_id, Credit())
        credit.value += weight * score * strength
        credit.ceiling = max(credit.ceiling, CEILING * score)
    return out


def chosen(
    found: Mapping[str, Credit], known: Iterable[str], limit: int
) -> tuple[dict[str, Credit], list[str]]:
    """The credits to apply: every one for a memory already a candidate (``known``), and for
    the others the ``limit`` best credited (ties by id); returns them and the new ids, best
    first."""
    known_ids = set(known)
    new = sorted(
        (i for i in found if i not in known_ids),
        key=lambda i: (-min(found[i].value, found[i].ceiling), i),
    )[: max(0, limit)]
    keep = {i: c for i, c in found.items() if i in known_ids} | {i: found[i] for i in new}
    return keep, new
