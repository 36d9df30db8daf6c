"""gRPC ↔ analytics service: request fields in, the typed report out as a Struct."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, TypeAlias

import grpc
from google.protobuf import struct_pb2

from exocortex.core.errors import Unavailable
from exocortex.maintenance.analytics.service import AnalyticsService
from exocortex.proto.v1 import analytics_pb2, analytics_pb2_grpc

Request = analytics_pb2.AnalyticsRequest
Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


def _plain(value: Any) -> Any:
    """A report value as JSON-ready data: records as objects, timestamps as ISO text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _report(value: Any, key: str | None = None) -> analytics_pb2.AnalyticsReport:
    """A report; a list travels under ``key`` since a Struct is an object."""
    body = _plain(value)
    struct = struct_pb2.Struct()
    struct.update({key: body} if key else body)
    return analytics_pb2.AnalyticsReport(body=struct)


class AnalyticsServicer(analytics_pb2_grpc.AnalyticsServicer):
    """Registered before the pool opens (the server listens first); the service is attached
    once Postgres is reached, and the health check says NOT_SERVING until then."""

    def __init__(self, service: AnalyticsService | None = None) -> None:
        self._attached = service

    def attach(self, service: AnalyticsService) -> None:
        self._attached = service

    @property
    def _service(self) -> AnalyticsService:
        if self._attached is None:
            raise Unavailable("analytics is starting; try again in a moment")
        return self._attached

    async def Summary(self, request: Request, context: Context) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.summary(request.namespace))

    async def AccessDistribution(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.access_distribution(request.namespace), "buckets")

    async def TagEffectiveness(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        rows = await self._service.tag_effectiveness(request.namespace, request.limit)
        return _report(rows, "tags")

    async def TagHealth(self, request: Request, context: Context) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.tag_health(request.namespace))

    async def ProducerQuality(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        rows = await self._service.producer_quality(request.namespace, request.by, request.limit)
        return _report(rows, "producers")

    async def QualityTrend(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        rows = await self._service.quality_trend(
            request.namespace, request.granularity, request.limit
        )
        return _report(rows, "periods")

    async def QualityDistribution(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.quality_distribution(request.namespace))

    async def EmbeddingHealth(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.embedding_health(request.namespace))

    async def DecayPreview(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        return _report(await self._service.decay_preview(request.namespace))

    async def SearchMisses(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        rows = await self._service.search_misses(request.namespace, request.days, request.limit)
        return _report(rows, "misses")

    async def KnowledgeGaps(
        self, request: Request, context: Context
    ) -> analytics_pb2.AnalyticsReport:
        rows = await self._service.knowledge_gaps(
            request.namespace, request.days, request.min_count, request.limit
        )
        return _report(rows, "gaps")
