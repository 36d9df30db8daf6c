"""Graph signals for search, read from Postgres: memory links and shared entities.

Graph proximity of a candidate (0..1, the maximum of):
* 1.0 when it mentions an entity named exactly like a word or 2-/3-word phrase of the query;
* 0.3 + 0.5 · strength when it is linked (either direction) to one of the top seeds;
* 0.5 when it shares an entity with one of the top seeds.
Only candidates the indexes found are scored: the graph reorders, it does not invent matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[\w.+#-]+", re.UNICODE)


@dataclass(frozen=True)
class Link:
    memory_id: str
    linked_from: str
    link_type: str
    strength: float


@dataclass(frozen=True)
class Extras:
    """What the quality and goal-relevance signals need beyond a memory's row: its link count
    and its strongest link to an active goal."""

    links: int
    goal: float


NO_EXTRAS = Extras(0, 0.0)


def entity_names(query: str) -> list[str]:
    """Words, 2-grams and 3-grams of the query (lower case): candidate entity names."""
    words = _TOKEN.findall(query.lower())
    names = {w for w in words if len(w) > 2}
    for n in (2, 3):
        names.update(" ".join(words[i : i + n]) for i in range(len(words) - n + 1))
    return sorted(names)
