"""A gRPC server with the standard health service, per-method metrics, correlation ids and
domain-error mapping, so each service's servicer only converts messages."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, cast

import grpc
import psycopg
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import Counter, Histogram

from exocortex.core import scope
from exocortex.core.errors import ExoError, Unavailable
from exocortex.core.logging import CORRELATION_HEADER, correlation_id, get_logger
from exocortex.core.rpc.errors import to_status

log = get_logger(__name__)

RPC_REQUESTS = Counter(
    "exo_rpc_requests_total", "gRPC requests handled", ["service", "method", "code"]
)
RPC_DURATION = Histogram(
    "exo_rpc_request_duration_seconds",
    "gRPC request latency",
    ["service", "method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


class _ServerInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, service: str) -> None:
        self._service = service

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        if handler.unary_stream is not None:
            return _scoped_stream(handler)
        if handler.unary_unary is None:
            return handler
        method = details.method.rsplit("/", 1)[-1]
        inner = handler.unary_unary
        service = self._service

        async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
            metadata = dict(context.invocation_metadata() or ())
            token = correlation_id.set(str(metadata.get(CORRELATION_HEADER, "")))
            scope_token = None
            start = time.perf_counter()
            code = "OK"
            try:
                scope_token = scope.caller_scope.set(_scope_of(metadata))
                return await inner(request, context)
            except ExoError as err:
                status, message, trailers = to_status(err)
                code = status.name
                await context.abort(status, message, trailers)
            except grpc.aio.AbortError:
                code = "ABORTED"
                raise
            except psycopg.OperationalError as exc:
                if _database_away(exc):
                    log.warning("database unreachable during rpc", method=method, error=str(exc))
                    status, message, trailers = to_status(
                        Unavailable("the database is not reachable; try again shortly")
                    )
                    code = status.name
                    await context.abort(status, message, trailers)
                code = "INTERNAL"
                log.exception("unhandled error in rpc", method=method)
                await context.abort(grpc.StatusCode.INTERNAL, f"internal error in {service}")
            except Exception:
                code = "INTERNAL"
                log.exception("unhandled error in rpc", method=method)
                await context.abort(grpc.StatusCode.INTERNAL, f"internal error in {service}")
            finally:
                RPC_REQUESTS.labels(service, method, code).inc()
                RPC_DURATION.labels(service, method).observe(time.perf_counter() - start)
                if scope_token is not None:
                    scope.caller_scope.reset(scope_token)
                correlation_id.reset(token)

        return grpc.unary_unary_rpc_method_handler(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


def _database_away(exc: psycopg.OperationalError) -> bool:
    """A connection refused, lost or not yet accepted (Postgres restarting after a crash) or
    none free in time: the same call succeeds once it is back, so the caller is told to retry
    (UNAVAILABLE) rather than that the service failed (INTERNAL)."""
    # No SQLSTATE: the client's own connection errors and pool timeouts. 57P: the server is
    # shutting down, crashed, or still starting.
    return exc.sqlstate is None or exc.sqlstate.startswith("57P")


def _scope_of(metadata: dict[str, Any]) -> frozenset[str] | None:
    raw = metadata.get(scope.SCOPE_HEADER)
    return None if raw is None else scope.decode(raw)


def _scoped_stream(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """A server-streaming handler with the caller's correlation id and namespace scope set."""
    inner = handler.unary_stream

    async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        metadata = dict(context.invocation_metadata() or ())
        token = correlation_id.set(str(metadata.get(CORRELATION_HEADER, "")))
        try:
            try:
                scope_token = scope.caller_scope.set(_scope_of(metadata))
            except ExoError as err:
                status, message, trailers = to_status(err)
                await context.abort(status, message, trailers)
            try:
                async for item in inner(request, context):
                    yield item
            finally:
                scope.caller_scope.reset(scope_token)
        finally:
            correlation_id.reset(token)

    return grpc.unary_stream_rpc_method_handler(
        wrapped,
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


class _LateHandlers(grpc.GenericRpcHandler):  # type: ignore[misc]
    """The services' handlers, looked up on each call, so that they can be added after the
    server listens (grpc-aio takes handlers only before it starts). Until the server is ready
    a call answers UNAVAILABLE, which callers already treat as "try again shortly"."""

    def __init__(self, service: str) -> None:
        self._handlers: list[grpc.GenericRpcHandler] = []
        self.ready = False
        self._starting = grpc.unary_unary_rpc_method_handler(_starting(service))

    # The two calls a generated ``add_<Service>Servicer_to_server`` makes on its server.
    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._handlers.extend(handlers)

    def add_registered_method_handlers(
        self, _service: str, _handlers: dict[str, grpc.RpcMethodHandler]
    ) -> None:
        """Ignored: the same handlers come through ``add_generic_rpc_handlers``."""

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        for handlers in self._handlers:
            found = handlers.service(details)
            if found is not None:
                return found
        return None if self.ready else self._starting


def _starting(service: str) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]:
    async def refuse(_request: Any, context: grpc.aio.ServicerContext) -> None:
        status, message, trailers = to_status(Unavailable(f"the {service} service is starting"))
        await context.abort(status, message, trailers)

    return refuse


class GrpcServer:
    """Owns a grpc.aio server and its health servicer.

    ``listen()`` opens the port early, with health NOT_SERVING, so that while the service waits
    for its dependencies (Postgres, the model) a caller can tell "starting" from "down";
    ``start()`` then reports SERVING. Servicers may be registered before or after ``listen()``.
    """

    def __init__(self, service: str, listen: str) -> None:
        self.service = service
        self.server = grpc.aio.server(
            interceptors=[_ServerInterceptor(service)],
            options=[("grpc.so_reuseport", 0), ("grpc.max_receive_message_length", 64 << 20)],
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._handlers = _LateHandlers(service)
        self.server.add_generic_rpc_handlers((self._handlers,))
        self.port = self.server.add_insecure_port(listen)
        if self.port == 0:
            raise RuntimeError(f"cannot listen on {listen}")
        self._service_names: Sequence[str] = ()
        self._listening = False
        self._stopped = False

    def register(self, add_fn: Callable[[Any, grpc.aio.Server], None], servicer: Any) -> None:
        # The generated function only adds handlers, which _LateHandlers takes at any time.
        add_fn(servicer, cast(grpc.aio.Server, self._handlers))

    async def listen(self) -> None:
        """Accept calls, answering health NOT_SERVING and every other call UNAVAILABLE."""
        if self._listening:
            return
        await self.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.start()
        self._listening = True
        log.info("grpc server listening", port=self.port)

    async def start(self, service_names: Sequence[str] = ()) -> None:
        """Serve the registered servicers (listening first if ``listen()`` was not called)."""
        await self.listen()
        self._service_names = service_names
        self._handlers.ready = True
        for name in ("", *service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("grpc server serving", port=self.port)

    async def stop(self, grace: float) -> None:
        """Idempotent: an exit stack that opened the port early may stop it again."""
        if self._stopped or not self._listening:
            return
        self._stopped = True
        for name in ("", *self._service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace)
