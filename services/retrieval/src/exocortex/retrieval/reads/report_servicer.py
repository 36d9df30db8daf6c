"""gRPC ↔ aggregate reads: stats, timeline, temporal stats, hierarchy, ping (conversion only)."""

from __future__ import annotations

import json
from typing import Any

import grpc

from exocortex.core.errors import InvalidArgument
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc
from exocortex.retrieval import converters
from exocortex.retrieval.reads.reports import ReportService
from exocortex.retrieval.reads.servicer import namespace_of


def report_params(request: retrieval_pb2.ReportRequest) -> dict[str, Any]:
    if not request.params_json:
        return {}
    try:
        parsed = json.loads(request.params_json)
    except json.JSONDecodeError as exc:
        raise InvalidArgument("params_json must be a JSON object", field="params_json") from exc
    if not isinstance(parsed, dict):
        raise InvalidArgument("params_json must be a JSON object", field="params_json")
    return parsed


class ReportServicer(retrieval_pb2_grpc.RetrievalServicer):
    def __init__(self, reports: ReportService) -> None:
        self._reports = reports

    async def GetStats(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        namespace = namespace_of(request.namespace, request.namespace_set)
        return converters.report(await self._reports.stats(namespace))

    async def GetTimeline(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        namespace = namespace_of(request.namespace, request.namespace_set)
        return converters.report(await self._reports.timeline(namespace, report_params(request)))

    async def GetTemporalStats(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        namespace = namespace_of(request.namespace, request.namespace_set)
        body = await self._reports.temporal_stats(namespace, report_params(request))
        return converters.report(body)

    async def GetHierarchy(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        namespace = namespace_of(request.namespace, request.namespace_set)
        body = await self._reports.hierarchy(namespace, report_params(request))
        return converters.report(body)

    async def Ping(
        self, request: retrieval_pb2.ReportRequest, context: grpc.aio.ServicerContext
    ) -> retrieval_pb2.Report:
        namespace = namespace_of(request.namespace, request.namespace_set)
        return converters.report(await self._reports.ping(namespace))
