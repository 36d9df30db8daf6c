"""Usage analytics (served by maintenance's Analytics RPCs): read-only reports limited to the
caller's namespaces. Field names follow the original's analytics API (camelCase)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query
from google.protobuf.json_format import MessageToDict

from exocortex.api.analytics import (
    AccessBucket,
    DecayPreview,
    EmbeddingHealth,
    KnowledgeGap,
    ProducerQuality,
    QualityDistribution,
    QualityPeriod,
    SearchMiss,
    Summary,
    TagEffectiveness,
    TagHealth,
)
from exocortex.api.limits import (
    ANALYTICS_LIMIT_MAX,
    COUNT_MAX,
    KNOWLEDGE_GAP_DAYS_MAX,
    NAMESPACE_MAX,
    SEARCH_MISS_DAYS_MAX,
)
from exocortex.api.vocabulary import Granularity, ProducerKind
from exocortex.gateway.backends import Backends
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import analytics_pb2, analytics_pb2_grpc

router = APIRouter(prefix="/api/analytics", tags=["analytics"])

Namespace = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=NAMESPACE_MAX,
        description="Only this namespace (default: every namespace the key may use).",
    ),
]
Limit = Annotated[int, Query(ge=1, le=ANALYTICS_LIMIT_MAX)]


Rpc = Callable[..., Awaitable[analytics_pb2.AnalyticsReport]]


async def _report(
    backends: Backends, pick: Callable[[analytics_pb2_grpc.AnalyticsStub], Rpc], **fields: Any
) -> dict[str, Any]:
    stub = analytics_pb2_grpc.AnalyticsStub(backends.channels["maintenance"])
    request = analytics_pb2.AnalyticsRequest(**{k: v for k, v in fields.items() if v is not None})
    reply = await pick(stub)(request, timeout=backends.settings.rpc_timeout_seconds)
    body: dict[str, Any] = _whole_numbers(MessageToDict(reply.body))
    return body


def _whole_numbers(value: Any) -> Any:
    """A Struct carries every number as a double; counts go back to ints."""
    if isinstance(value, dict):
        return {k: _whole_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole_numbers(v) for v in value]
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


@router.get("/summary", response_model=Summary)
async def summary(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """Active memories, the share never accessed and the share found useful at least once, and
    the median access count."""
    return await _report(backends, lambda s: s.Summary, namespace=namespace)


@router.get("/access-distribution", response_model=list[AccessBucket])
async def access_distribution(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """Memories per access-count bucket: 0, 1-5, 6-20, 21-100, 100+ (every bucket listed)."""
    body = await _report(backends, lambda s: s.AccessDistribution, namespace=namespace)
    return body.get("buckets", [])


@router.get("/tag-effectiveness", response_model=list[TagEffectiveness])
async def tag_effectiveness(
    backends: BackendsDep, namespace: Namespace = None, limit: Limit = 20
) -> Any:
    """Tags on at least 3 memories, by how often their memories were found useful."""
    body = await _report(backends, lambda s: s.TagEffectiveness, namespace=namespace, limit=limit)
    return body.get("tags", [])


@router.get("/tag-health", response_model=TagHealth)
async def tag_health(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """Tags in use, the alias map, and spellings that are probably one tag (similarity ≥ 0.8
    between tags used at least twice; the 10 most similar pairs, `mergeCount` in all)."""
    return await _report(backends, lambda s: s.TagHealth, namespace=namespace)


@router.get("/producer-quality", response_model=list[ProducerQuality])
async def producer_quality(
    backends: BackendsDep,
    namespace: Namespace = None,
    by: ProducerKind = "model",
    limit: Limit = 15,
) -> Any:
    """Models or agents with at least 3 memories, by how useful their memories turned out."""
    body = await _report(
        backends, lambda s: s.ProducerQuality, namespace=namespace, by=by, limit=limit
    )
    return body.get("producers", [])


@router.get("/quality-trend", response_model=list[QualityPeriod])
async def quality_trend(
    backends: BackendsDep,
    namespace: Namespace = None,
    granularity: Granularity = "month",
    limit: Limit = 12,
) -> Any:
    """The last `limit` months (or ISO weeks) with memories, oldest first: memories created,
    their average useful count and the share never accessed."""
    body = await _report(
        backends,
        lambda s: s.QualityTrend,
        namespace=namespace,
        granularity=granularity,
        limit=limit,
    )
    return body.get("periods", [])


@router.get("/quality-distribution", response_model=QualityDistribution)
async def quality_distribution(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """The quality score over active memories: mean, median, p10, p90, how many at or above
    0.5 and below 0.2."""
    return await _report(backends, lambda s: s.QualityDistribution, namespace=namespace)


@router.get("/embedding-health", response_model=EmbeddingHealth)
async def embedding_health(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """Active rows with an embedding, those made by another model than the one running now,
    and those with none."""
    return await _report(backends, lambda s: s.EmbeddingHealth, namespace=namespace)


@router.get("/decay-preview", response_model=DecayPreview)
async def decay_preview(backends: BackendsDep, namespace: Namespace = None) -> Any:
    """What the importance job's decay would lower now (the 50 lowest in quality, content cut
    at 120 characters) and how many in all. Changes nothing."""
    return await _report(backends, lambda s: s.DecayPreview, namespace=namespace)


@router.get("/search-misses", response_model=list[SearchMiss])
async def search_misses(
    backends: BackendsDep,
    namespace: Namespace = None,
    limit: Limit = 20,
    days: Annotated[int, Query(ge=1, le=SEARCH_MISS_DAYS_MAX)] = 7,
) -> Any:
    """Searches that found nothing in the last `days`, one row per query (case and spacing
    ignored) with how often it was asked, most asked first."""
    body = await _report(
        backends, lambda s: s.SearchMisses, namespace=namespace, limit=limit, days=days
    )
    return body.get("misses", [])


@router.get("/knowledge-gaps", response_model=list[KnowledgeGap])
async def knowledge_gaps(
    backends: BackendsDep,
    namespace: Namespace = None,
    min_count: Annotated[int, Query(ge=1, le=COUNT_MAX)] = 3,
    days: Annotated[int, Query(ge=1, le=KNOWLEDGE_GAP_DAYS_MAX)] = 14,
    limit: Limit = 20,
) -> Any:
    """Missed searches grouped into topics worth writing down: each query joins the topic of
    its most missed word (stemmed), topics missed at least `min_count` times, with a severity
    (≥ 10 critical, ≥ 5 warning, else info) and their most asked queries."""
    body = await _report(
        backends,
        lambda s: s.KnowledgeGaps,
        namespace=namespace,
        min_count=min_count,
        days=days,
        limit=limit,
    )
    return body.get("gaps", [])
