"""gRPC client channels that carry the correlation id and the caller's namespace scope, and a
health probe."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from exocortex.core import scope
from exocortex.core.logging import CORRELATION_HEADER, current_correlation_id


def _with_context(details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
    """The call's details plus the correlation id and the caller's namespace scope."""
    cid = current_correlation_id()
    namespaces = scope.current_scope()
    if not cid and namespaces is None:
        return details
    metadata = grpc.aio.Metadata(*(details.metadata or ()))
    if cid:
        metadata.add(CORRELATION_HEADER, cid)
    if namespaces is not None:
        metadata.add(scope.SCOPE_HEADER, scope.encode(namespaces))
    return grpc.aio.ClientCallDetails(
        details.method,
        details.timeout,
        metadata,
        details.credentials,
        details.wait_for_ready,
    )


# One class per call kind: a grpc.aio channel files each interceptor under the first kind it
# is an instance of, so one class cannot serve both.
class _ContextInterceptor(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[Any]],
        details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        return await continuation(_with_context(details), request)


class _StreamContextInterceptor(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[Any]],
        details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        return await continuation(_with_context(details), request)


# A target may name several replicas (`dns:///name:port` over a headless Service on a cluster,
# `ipv4:host:p1,host:p2`): calls go round robin over every address that answers, instead of all
# to the first. A call that meets UNAVAILABLE (a replica stopping or gone, still starting, or
# without Postgres) is tried once more, on the next replica when there is one
# (docs/scaling.md). Stores are safe to repeat: a repeated one is a hash duplicate.
SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{}],
                "retryPolicy": {
                    "maxAttempts": 2,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.2s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
)


def open_channel(addr: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(
        addr,
        interceptors=[_ContextInterceptor(), _StreamContextInterceptor()],
        options=[
            ("grpc.max_receive_message_length", 64 << 20),
            ("grpc.keepalive_time_ms", 30_000),
            # Re-dial quickly after a peer restarts.
            ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 2_000),
            ("grpc.service_config", SERVICE_CONFIG),
            ("grpc.enable_retries", 1),
        ],
    )


Serving = Literal["ok", "starting", "down"]


async def check_health(channel: grpc.aio.Channel, deadline_seconds: float = 1.0) -> Serving:
    """``ok`` when the server reports SERVING; ``starting`` when it answers but is not ready
    (a service listens while it waits for its dependencies, see GrpcServer.listen); ``down``
    when nothing answers."""
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        reply = await stub.Check(
            health_pb2.HealthCheckRequest(service=""), timeout=deadline_seconds
        )
    except grpc.aio.AioRpcError:
        return "down"
    return "ok" if reply.status == health_pb2.HealthCheckResponse.SERVING else "starting"
