"""The reports as typed records: what the repository reads and the service returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

Granularity = Literal["month", "week"]
ProducerField = Literal["model", "agent"]
Severity = Literal["critical", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Summary:
    total_active: int
    never_accessed_pct: float
    useful_pct: float
    median_access_count: float


@dataclass(frozen=True, slots=True)
class AccessBucket:
    label: str
    count: int


@dataclass(frozen=True, slots=True)
class TagEffectiveness:
    tag: str
    memory_count: int
    avg_useful_count: float


@dataclass(frozen=True, slots=True)
class TagMergeSuggestion:
    """Two spellings of one tag: ``from_tag`` (the less used) would be renamed ``to_tag``."""

    from_tag: str
    to_tag: str
    similarity: float
    from_count: int
    to_count: int


@dataclass(frozen=True, slots=True)
class TagHealth:
    total_tags: int
    merge_count: int
    alias_map: dict[str, str]
    suggestions: list[TagMergeSuggestion]


@dataclass(frozen=True, slots=True)
class ProducerQuality:
    producer: str
    memory_count: int
    avg_useful_count: float


@dataclass(frozen=True, slots=True)
class QualityPeriod:
    period: str
    created: int
    avg_useful: float
    never_accessed_pct: float


@dataclass(frozen=True, slots=True)
class QualityDistribution:
    avg: float
    median: float
    p10: float
    p90: float
    high_quality: int
    low_quality: int
    total: int


@dataclass(frozen=True, slots=True)
class EmbeddingHealth:
    current_model: str | None
    dimensions: int | None
    total_embedded: int
    mismatched_model: int
    missing_embedding: int
    # Fingerprints found in the store and how many rows carry each.
    models: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DecayCandidate:
    id: str
    namespace: str
    content: str
    importance: float
    quality: float
    created_at: datetime


@dataclass(frozen=True, slots=True)
class DecayPreview:
    candidates: list[DecayCandidate]
    total: int
    decay_age_days: int


@dataclass(frozen=True, slots=True)
class SearchMiss:
    query: str
    count: int
    avg_max_score: float
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class KnowledgeGap:
    # The original's rows are single queries (``query``); this product groups them by topic
    # and keeps ``query`` as the topic's most asked one, so the original's clients still work.
    query: str
    topic: str
    count: int
    severity: Severity
    queries: list[str]
    last_seen: datetime
