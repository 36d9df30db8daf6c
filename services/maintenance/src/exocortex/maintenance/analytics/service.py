"""The analytics reports on typed values: which namespaces a report covers, its limits, and the
little logic SQL does not do (tag merge suggestions, gap severity, the current model)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from exocortex.core import scope
from exocortex.core.errors import InvalidArgument
from exocortex.core.logging import get_logger
from exocortex.maintenance.analytics.models import (
    AccessBucket,
    DecayPreview,
    EmbeddingHealth,
    Granularity,
    KnowledgeGap,
    ProducerField,
    ProducerQuality,
    QualityDistribution,
    QualityPeriod,
    SearchMiss,
    Severity,
    Summary,
    TagEffectiveness,
    TagHealth,
    TagMergeSuggestion,
)
from exocortex.maintenance.analytics.repository import AnalyticsRepository

log = get_logger(__name__)

# A tag or producer needs this many memories before its average says anything (the seed's 3).
MIN_MEMORIES = 3
MAX_LIMIT = 100
MAX_DAYS = 365
DECAY_PREVIEW_LIMIT = 50
TAG_SUGGESTIONS = 10
# Tags compared for merge suggestions: used at least twice, the most used first.
TAG_MIN_USES = 2
TAG_MAX_COMPARED = 500
QUERIES_PER_TOPIC = 5
DEFAULT_DECAY_AGE_DAYS = 30


@dataclass(frozen=True, slots=True)
class ModelInfo:
    fingerprint: str
    dimensions: int


# Asks the embedding service which model it runs now; None when it cannot be reached.
CurrentModel = Callable[[], Awaitable[ModelInfo | None]]


def _bounded(value: int, default: int, low: int, high: int, field: str) -> int:
    if value == 0:
        return default
    if not low <= value <= high:
        raise InvalidArgument(f"{field} must be {low}..{high}", field=field)
    return value


def severity(count: int) -> Severity:
    return "critical" if count >= 10 else "warning" if count >= 5 else "info"


def covered(namespace: str) -> list[str] | None:
    """The namespaces a report covers: the one named (if the caller may use it), else every
    namespace of the caller's key (None: every namespace)."""
    if namespace:
        return [scope.require(namespace)]
    return scope.scoped_list()


class AnalyticsService:
    def __init__(self, repository: AnalyticsRepository, current_model: CurrentModel) -> None:
        self._repo = repository
        self._current_model = current_model

    async def summary(self, namespace: str) -> Summary:
        return await self._repo.summary(covered(namespace))

    async def access_distribution(self, namespace: str) -> list[AccessBucket]:
        return await self._repo.access_distribution(covered(namespace))

    async def tag_effectiveness(self, namespace: str, limit: int) -> list[TagEffectiveness]:
        limit = _bounded(limit, 20, 1, MAX_LIMIT, "limit")
        return await self._repo.tag_effectiveness(covered(namespace), limit, MIN_MEMORIES)

    async def tag_health(self, namespace: str) -> TagHealth:
        row = await self._repo.tag_health(
            covered(namespace),
            min_uses=TAG_MIN_USES,
            max_tags=TAG_MAX_COMPARED,
            suggestions=TAG_SUGGESTIONS,
        )
        return TagHealth(
            total_tags=row.total_tags,
            merge_count=row.merge_count,
            alias_map=self._alias_map(await self._repo.setting("tags.alias_map")),
            suggestions=[TagMergeSuggestion(**s) for s in row.suggestions],
        )

    @staticmethod
    def _alias_map(raw: str | None) -> dict[str, str]:
        try:
            value = json.loads(raw or "{}")
        except ValueError:
            log.warning("tags.alias_map is not JSON; reported as empty")
            return {}
        if not isinstance(value, dict):
            return {}
        return {str(k): str(v) for k, v in value.items()}

    async def producer_quality(self, namespace: str, by: str, limit: int) -> list[ProducerQuality]:
        field: ProducerField = _choice(by or "model", ("model", "agent"), "by")  # type: ignore[assignment]
        limit = _bounded(limit, 15, 1, MAX_LIMIT, "limit")
        return await self._repo.producer_quality(covered(namespace), field, limit, MIN_MEMORIES)

    async def quality_trend(
        self, namespace: str, granularity: str, limit: int
    ) -> list[QualityPeriod]:
        unit: Granularity = _choice(  # type: ignore[assignment]
            granularity or "month", ("month", "week"), "granularity"
        )
        limit = _bounded(limit, 12, 1, MAX_LIMIT, "limit")
        return await self._repo.quality_trend(covered(namespace), unit, limit)

    async def quality_distribution(self, namespace: str) -> QualityDistribution:
        return await self._repo.quality_distribution(covered(namespace))

    async def embedding_health(self, namespace: str) -> EmbeddingHealth:
        counts = await self._repo.embedding_models(covered(namespace))
        current = await self._current_model()
        models: dict[str, int] = {}
        for row in counts:
            if row.embedded:
                models[row.model] = models.get(row.model, 0) + row.n
        embedded = sum(models.values())
        if current is None:
            # Without the service's answer, the fingerprint most rows carry stands in.
            name = max(models, key=lambda m: models[m]) if models else None
            dims = max((r.dimensions or 0 for r in counts if r.model == name), default=0)
        else:
            name, dims = current.fingerprint, current.dimensions
        return EmbeddingHealth(
            current_model=name,
            dimensions=dims or None,
            total_embedded=embedded,
            mismatched_model=sum(n for model, n in models.items() if model != name),
            missing_embedding=sum(r.n for r in counts if not r.embedded),
            models=models,
        )

    async def decay_preview(self, namespace: str) -> DecayPreview:
        raw = await self._repo.setting("importance.decay_age_days")
        try:
            age = int(float(raw)) if raw is not None else DEFAULT_DECAY_AGE_DAYS
        except ValueError:
            age = DEFAULT_DECAY_AGE_DAYS
        rows = await self._repo.decay_candidates(covered(namespace), age, DECAY_PREVIEW_LIMIT)
        return DecayPreview(
            candidates=[r.candidate() for r in rows],
            total=rows[0].total if rows else 0,
            decay_age_days=age,
        )

    async def search_misses(self, namespace: str, days: int, limit: int) -> list[SearchMiss]:
        days = _bounded(days, 7, 1, 90, "days")
        limit = _bounded(limit, 20, 1, MAX_LIMIT, "limit")
        return await self._repo.search_misses(covered(namespace), days, limit)

    async def knowledge_gaps(
        self, namespace: str, days: int, min_count: int, limit: int
    ) -> list[KnowledgeGap]:
        rows = await self._repo.knowledge_gaps(
            covered(namespace),
            days=_bounded(days, 14, 1, MAX_DAYS, "days"),
            min_count=_bounded(min_count, 3, 1, 1_000_000, "min_count"),
            limit=_bounded(limit, 20, 1, MAX_LIMIT, "limit"),
            queries_per_topic=QUERIES_PER_TOPIC,
        )
        return [
            KnowledgeGap(
                query=r.queries[0] if r.queries else r.topic,
                topic=r.topic,
                count=r.count,
                severity=severity(r.count),
                queries=r.queries,
                last_seen=r.last_seen,
            )
            for r in rows
        ]


def _choice(value: str, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise InvalidArgument(f"{field} must be one of {', '.join(allowed)}", field=field)
    return value
