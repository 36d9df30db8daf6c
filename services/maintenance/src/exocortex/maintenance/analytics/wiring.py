"""Builds the analytics service over the worker's pool, with the embedding service asked for
the model it runs now (for embedding health)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

import grpc

from exocortex.core.config import CommonSettings
from exocortex.core.logging import get_logger
from exocortex.core.rpc.client import open_channel
from exocortex.maintenance.analytics.repository import AnalyticsRepository, Pool
from exocortex.maintenance.analytics.service import AnalyticsService, CurrentModel, ModelInfo
from exocortex.maintenance.analytics.servicer import AnalyticsServicer
from exocortex.proto.v1 import analytics_pb2_grpc, embedding_pb2, embedding_pb2_grpc

log = get_logger(__name__)

MODEL_INFO_TIMEOUT_SECONDS = 2.0


def model_probe(channel: grpc.aio.Channel) -> CurrentModel:
    stub = embedding_pb2_grpc.EmbeddingStub(channel)

    async def current() -> ModelInfo | None:
        try:
            info = await stub.GetModelInfo(
                embedding_pb2.GetModelInfoRequest(), timeout=MODEL_INFO_TIMEOUT_SECONDS
            )
        except grpc.aio.AioRpcError as exc:
            log.info("embedding service not reachable for model info", code=exc.code().name)
            return None
        return ModelInfo(fingerprint=info.fingerprint, dimensions=info.dimensions)

    return current


def build_service(pool: Pool, embedding: grpc.aio.Channel) -> AnalyticsService:
    return AnalyticsService(AnalyticsRepository(pool), model_probe(embedding))


def registration(
    servicer: AnalyticsServicer,
) -> tuple[Callable[[Any, grpc.aio.Server], None], Any, str]:
    """The (add function, servicer, full name) entry for the worker's gRPC server."""
    return analytics_pb2_grpc.add_AnalyticsServicer_to_server, servicer, "exocortex.v1.Analytics"


def attach(
    stack: AsyncExitStack, servicer: AnalyticsServicer, pool: Pool, settings: CommonSettings
) -> None:
    """Gives the servicer its service once the pool is open; the channel closes with the stack."""
    channel = open_channel(settings.embedding_addr)
    stack.push_async_callback(channel.close)
    servicer.attach(build_service(pool, channel))
