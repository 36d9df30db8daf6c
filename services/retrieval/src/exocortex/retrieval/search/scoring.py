"""The boosts applied on top of fusion, pure so each signal is easy to test and explain.

Every signal is a number in 0..1 that also appears in the per-result breakdown:

* recency = exp(-decay · (1 - 0.5 · importance) · age_days): important memories fade slower;
* frequency = ln(1 + accesses) / ln(1 + most accesses in the namespace);
* usefulness = min(1, ln(1 + useful_count) / ln 6): saturates after five useful fetches;
* valence = |valence|: strongly felt memories (good or bad) matter more;
* quality = 0.30·importance + 0.25·usefulness + 0.15·min(1, ln(1 + accesses)/ln 21)
  + 0.15·min(1, links/5) + 0.15·exp(-0.02·age_days): what the memory's own record says of it,
  whatever the query (the original's quality score);
* goal relevance = 1 when the memory is progress logged on an active goal (or tagged
  ``goal-progress``), 0.7 when enrichment found it relevant to one (``goal-progress-implicit``);
* tag = 1 when a query word (> 2 characters) is one of the words of the memory's tags (or shares
  its first four or more characters with one: deploy, deployment).

RRF mode multiplies the fused score by 1 + Σ weight · signal and adds tag_boost × the best fused
score for a tag match; legacy mode is the seed's weighted average of raw scores and signals.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from exocortex.core.records import MemoryRecord
from exocortex.retrieval.search.graph import Extras

_WORD = re.compile(r"[\w.+#-]+", re.UNICODE)


def setting_float(settings: Mapping[str, str], key: str, default: float) -> float:
    """A number setting as a float: ``default`` when it is missing, does not parse, or is not
    finite (the search's settings are read on every search; a bad value must not fail it)."""
    try:
        value = float(settings.get(key, default))
    except ValueError:
        return default
    return value if math.isfinite(value) else default


@dataclass(frozen=True)
class ScoringSettings:
    use_rrf: bool = True
    rrf_k: float = 5.0
    vector_weight: float = 0.50
    fts_weight: float = 0.50
    graph_weight: float = 0.05
    context_weight: float = 0.0
    recency_weight: float = 0.20
    recency_decay: float = 0.05
    frequency_weight: float = 0.10
    usefulness_weight: float = 0.05
    valence_weight: float = 0.05
    quality_weight: float = 0.10
    goal_weight: float = 0.10
    tag_boost: float = 0.10
    legacy_min_score: float = 0.15
    # RRF mode's threshold when the query names none (0: every scored result is kept).
    rrf_min_score: float = 0.0
    # A keywords match against a content match in the keyword index (BM25 field weight).
    keyword_boost: float = 2.0
    metadata_mode: str = "penalize"
    metadata_penalty: float = 0.35
    metadata_tags: tuple[str, ...] = ()

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> ScoringSettings:
        tags = tuple(t.strip() for t in s.get("search.metadata_tags", "").split(",") if t.strip())
        return cls(
            use_rrf=s.get("scoring.use_rrf", "true").strip().lower() != "false",
            rrf_k=max(1.0, setting_float(s, "scoring.rrf_k", 5.0)),
            vector_weight=setting_float(s, "scoring.vector_weight", 0.50),
            fts_weight=setting_float(s, "scoring.fts_weight", 0.50),
            graph_weight=setting_float(s, "scoring.graph_weight", 0.05),
            context_weight=max(0.0, setting_float(s, "scoring.context_weight", 0.0)),
            recency_weight=setting_float(s, "scoring.recency_weight", 0.20),
            recency_decay=setting_float(s, "scoring.recency_decay", 0.05),
            frequency_weight=setting_float(s, "scoring.frequency_weight", 0.10),
            usefulness_weight=setting_float(s, "scoring.usefulness_weight", 0.05),
            valence_weight=setting_float(s, "scoring.valence_weight", 0.05),
            quality_weight=setting_float(s, "scoring.quality_weight", 0.10),
            goal_weight=setting_float(s, "scoring.goal_gated_weight", 0.10),
            tag_boost=setting_float(s, "scoring.tag_boost", 0.10),
            legacy_min_score=setting_float(s, "scoring.min_score", 0.15),
            rrf_min_score=max(0.0, setting_float(s, "scoring.rrf_min_score", 0.0)),
            keyword_boost=max(0.0, setting_float(s, "scoring.keyword_boost", 2.0)),
            metadata_mode=s.get("search.metadata_mode", "penalize"),
            metadata_penalty=setting_float(s, "search.metadata_penalty", 0.35),
            metadata_tags=tags,
        )


@dataclass
class Signals:
    recency: float = 0.0
    frequency: float = 0.0
    usefulness: float = 0.0
    valence: float = 0.0
    tag: float = 0.0
    quality: float = 0.0
    goal: float = 0.0


# Links that count as fully connected, and accesses that count as much used, for quality.
_QUALITY_LINKS = 5
_QUALITY_ACCESSES = 20
# Goal relevance of a memory logged as progress on a goal, and of one enrichment linked.
GOAL_EXPLICIT, GOAL_IMPLICIT = 1.0, 0.7
_GOAL_TAGS = {"goal-progress": GOAL_EXPLICIT, "goal-progress-implicit": GOAL_IMPLICIT}


def query_terms(query: str) -> list[str]:
    """Lower-cased words longer than two characters, in order, without repeats."""
    return list(dict.fromkeys(w for w in _WORD.findall(query.lower()) if len(w) > 2))


def recency(created_at: datetime, now: datetime, importance: float, decay: float) -> float:
    age_days = max(0.0, (now - created_at).total_seconds() / 86_400.0)
    return math.exp(-decay * (1.0 - 0.5 * importance) * age_days)


def frequency(access_count: int, max_access: int) -> float:
    if access_count <= 0 or max_access <= 0:
        return 0.0
    return min(1.0, math.log1p(access_count) / math.log1p(max_access))


def usefulness(useful_count: int) -> float:
    return min(1.0, math.log1p(max(0, useful_count)) / math.log(6.0))


def quality(
    *, importance: float, useful_count: int, access_count: int, links: int, age_days: float
) -> float:
    return (
        0.30 * importance
        + 0.25 * usefulness(useful_count)
        + 0.15 * min(1.0, math.log1p(max(0, access_count)) / math.log1p(_QUALITY_ACCESSES))
        + 0.15 * min(1.0, max(0, links) / _QUALITY_LINKS)
        + 0.15 * math.exp(-0.02 * max(0.0, age_days))
    )


def goal_relevance(goal_link: float, tags: Iterable[str]) -> float:
    """The strongest of the memory's link to an active goal and its goal-progress tags."""
    return max([goal_link, *(_GOAL_TAGS.get(t, 0.0) for t in tags)])


_TAG_WORD = re.compile(r"[-_/.:\s]+")
# A query word and a tag word this long or longer match on a shared start (deploy, deployment).
_STEM_CHARS = 4


def _word_match(term: str, word: str) -> bool:
    if term == word:
        return True
    shorter = min(len(term), len(word))
    return shorter >= _STEM_CHARS and (word.startswith(term) or term.startswith(word))


def tag_match(terms: Iterable[str], tags: Iterable[str]) -> bool:
    """A query word is one of a tag's words, or shares its start with one (at least four
    characters). Not any substring: "ship" is no match for "relationship", nor "new" for
    "newsletter", which would lift memories for words they do not carry."""
    words = [_tag_words(t) for t in tags]
    return any(
        term == tag or any(_word_match(term, w) for w in parts)
        for term in terms
        for tag, parts in words
    )


@functools.lru_cache(maxsize=4096)
def _tag_words(tag: str) -> tuple[str, tuple[str, ...]]:
    """A tag in lower case and its words. Kept: a search scores dozens of memories whose
    tags come from a small vocabulary."""
    lowered = tag.lower()
    return lowered, tuple(w for w in _TAG_WORD.split(lowered) if w)


def signals(
    memory: MemoryRecord,
    extras: Extras,
    *,
    now: datetime,
    terms: list[str],
    max_access: int,
    cfg: ScoringSettings,
) -> Signals:
    """The boost signals of one memory, from its row and its ``extras`` (links, goal link)."""
    created = memory.created_at
    importance = float(memory.importance)
    useful = int(memory.useful_count or 0)
    accesses = int(memory.access_count or 0)
    tags = list(memory.tags or ())
    return Signals(
        recency=recency(created, now, importance, cfg.recency_decay),
        frequency=frequency(accesses, max_access),
        usefulness=usefulness(useful),
        valence=abs(float(memory.valence or 0.0)),
        tag=1.0 if tag_match(terms, tags) else 0.0,
        quality=quality(
            importance=importance,
            useful_count=useful,
            access_count=accesses,
            links=extras.links,
            age_days=max(0.0, (now - created).total_seconds() / 86_400.0),
        ),
        goal=goal_relevance(extras.goal, tags),
    )


def boost_multiplier(sig: Signals, cfg: ScoringSettings) -> float:
    return (
        1.0
        + cfg.recency_weight * sig.recency
        + cfg.frequency_weight * sig.frequency
        + cfg.usefulness_weight * sig.usefulness
        + cfg.valence_weight * sig.valence
        + cfg.quality_weight * sig.quality
        + cfg.goal_weight * sig.goal
    )


def legacy_score(
    vector: float, keyword_norm: float, graph: float, sig: Signals, cfg: ScoringSettings
) -> float:
    """The seed's weighted average (graph kept at its weight here too, since it is computed)."""
    return (
        cfg.vector_weight * max(0.0, vector)
        + cfg.fts_weight * keyword_norm
        + cfg.graph_weight * graph
        + cfg.recency_weight * sig.recency
        + cfg.frequency_weight * sig.frequency
        + cfg.usefulness_weight * sig.usefulness
        + cfg.valence_weight * sig.valence
        + cfg.quality_weight * sig.quality
        + cfg.goal_weight * sig.goal
        + (cfg.tag_boost if sig.tag else 0.0)
    )


def wants_metadata(
    include_metadata: bool, tags: Iterable[str], query: str, cfg: ScoringSettings
) -> bool:
    """Asking for metadata: explicitly, by filtering on a metadata tag, or by naming one."""
    if include_metadata:
        return True
    meta = set(cfg.metadata_tags)
    if meta.intersection(tags):
        return True
    lowered = query.lower()
    return any(t in lowered or t.replace("-", " ") in lowered for t in meta)
