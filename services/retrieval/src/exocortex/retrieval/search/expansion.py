"""Query expansion (`search.query_expansion`): other names the store knows for what a query
mentions, OR-ed into the keyword query.

* Entities: a query word, 2-gram or 3-gram that is an entity's name or one of its aliases
  (case-insensitive, in the namespace) brings in the entity's name, its aliases and up to
  five entities it has relationships with (most confident first).
* Tags: a query word that is a tag alias brings in its canonical tag, and a canonical tag its
  aliases (`tags.alias_map`, `tag_alias.*`).

At most `search.expansion_max_terms` (15) terms, never one the query already has. The terms go
to the keyword index only: appended to the embedded text they would pull the query vector toward
every related name at once, whereas a keyword OR simply lets more documents match. Text the
caller sends as `expanded_query` is its own paraphrase and goes to both.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from exocortex.core.domain.tags import alias_map

RELATED_PER_ENTITY = 5
MAX_PHRASES = 200
_WORD = re.compile(r"[\w][\w.+#-]*", re.UNICODE)


@dataclass(frozen=True)
class ExpansionSettings:
    enabled: bool
    max_terms: int
    tag_aliases: Mapping[str, str]

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> ExpansionSettings:
        try:
            max_terms = max(0, int(settings.get("search.expansion_max_terms", "15")))
        except ValueError:
            max_terms = 15
        return cls(
            enabled=settings.get("search.query_expansion", "true").strip().lower() != "false",
            max_terms=max_terms,
            tag_aliases=alias_map(settings),
        )


def words_of(text: str) -> list[str]:
    return [w.strip(".-").lower() for w in _WORD.findall(text) if w.strip(".-")]


def phrases(query: str) -> list[str]:
    """Every word over two characters, and every 2-gram and 3-gram, lower-cased, in order."""
    words = words_of(query)
    found: dict[str, None] = {}
    for size in (1, 2, 3):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            if size == 1 and len(gram[0]) <= 2:
                continue
            found.setdefault(" ".join(gram), None)
    return list(found)[:MAX_PHRASES]


def tag_terms(query_words: list[str], aliases: Mapping[str, str]) -> list[str]:
    """Both directions of the tag alias table, for the words of the query."""
    out: list[str] = []
    for word in query_words:
        if word in aliases:
            out.append(aliases[word])
        out.extend(alias for alias, canonical in aliases.items() if canonical == word)
    return out


def select_terms(query: str, candidates: list[str], max_terms: int) -> list[str]:
    """Candidates in order, minus what the query already says, without repeats, capped."""
    present = set(words_of(query))
    chosen: dict[str, str] = {}
    for term in candidates:
        key = term.strip().lower()
        if not key or key in chosen or set(words_of(key)) <= present:
            continue
        chosen[key] = term.strip()
        if len(chosen) >= max_terms:
            break
    return list(chosen.values())


def expand(query: str, entity_terms: list[str], settings: ExpansionSettings) -> list[str]:
    """The terms to add: the entities' names the store knows for the query
    (``repository.entity_terms``), then the tag aliases, without what the query already says."""
    candidates = entity_terms + tag_terms(words_of(query), settings.tag_aliases)
    return select_terms(query, candidates, settings.max_terms)
