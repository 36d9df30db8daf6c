"""gRPC ↔ ExportService conversion only (a server stream)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from exocortex.core.errors import ExoError
from exocortex.core.logging import get_logger
from exocortex.core.rpc.errors import to_status
from exocortex.proto.v1 import admin_pb2, admin_pb2_grpc
from exocortex.retrieval.reads.export import ExportService

log = get_logger(__name__)


class ExportServicer(admin_pb2_grpc.ExportServicer):
    def __init__(self, service: ExportService) -> None:
        self._service = service

    async def ExportData(
        self, request: admin_pb2.ExportRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[admin_pb2.ExportBatch]:
        # The shared interceptor maps errors of unary calls only; a stream maps its own.
        try:
            async for section, items in self._service.batches(
                request.namespace, request.batch_size, embeddings=request.include_embeddings
            ):
                yield admin_pb2.ExportBatch(section=section, items_json=items)
        except ExoError as err:
            status, message, trailers = to_status(err)
            await context.abort(status, message, trailers)
        except Exception:
            log.exception("export failed")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error in retrieval export")
