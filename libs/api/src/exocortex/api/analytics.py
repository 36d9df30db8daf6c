"""Usage analytics: read-only reports. Field names follow the original's analytics API
(camelCase, but for the search misses and knowledge gaps)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from exocortex.api.vocabulary import GapSeverity


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class Summary(_Camel):
    total_active: int
    never_accessed_pct: float
    useful_pct: float
    median_access_count: float


class AccessBucket(_Camel):
    label: str
    count: int


class TagEffectiveness(_Camel):
    tag: str
    memory_count: int
    avg_useful_count: float


class TagMergeSuggestion(_Camel):
    from_tag: str
    to_tag: str
    similarity: float
    from_count: int
    to_count: int


class TagHealth(_Camel):
    total_tags: int
    merge_count: int
    alias_map: dict[str, str]
    suggestions: list[TagMergeSuggestion]


class ProducerQuality(_Camel):
    producer: str
    memory_count: int
    avg_useful_count: float


class QualityPeriod(_Camel):
    period: str
    created: int
    avg_useful: float
    never_accessed_pct: float


class QualityDistribution(_Camel):
    avg: float
    median: float
    p10: float
    p90: float
    high_quality: int
    low_quality: int
    total: int


class EmbeddingHealth(_Camel):
    current_model: str | None
    dimensions: int | None
    total_embedded: int
    mismatched_model: int
    missing_embedding: int
    models: dict[str, int]


class DecayCandidate(_Camel):
    id: str
    namespace: str
    content: str
    importance: float
    quality: float
    created_at: datetime


class DecayPreview(_Camel):
    candidates: list[DecayCandidate]
    total: int
    decay_age_days: int


class SearchMiss(BaseModel):
    # The original names these fields in snake_case.
    query: str
    count: int
    avg_max_score: float
    last_seen: datetime


class KnowledgeGap(BaseModel):
    # ``query`` is the original's field: the topic's most asked query.
    query: str
    topic: str
    count: int
    severity: GapSeverity
    queries: list[str]
    last_seen: datetime
