"""The export, read from retrieval's streaming Export RPC (the one format every backup and
download shares), as (section, items) batches."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from exocortex.core.rpc.errors import from_rpc_error
from exocortex.proto.v1 import admin_pb2, admin_pb2_grpc

BATCH = 500


class ExportSource:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._stub = admin_pb2_grpc.ExportStub(channel)

    async def batches(self, *, embeddings: bool = False) -> AsyncIterator[tuple[str, list[str]]]:
        """Every namespace (backups run with no caller scope, or an unscoped caller's); with
        ``embeddings``, each memory also carries its embedding (base64, in the same snapshot)."""
        request = admin_pb2.ExportRequest(batch_size=BATCH, include_embeddings=embeddings)
        try:
            async for batch in self._stub.ExportData(request):
                yield batch.section, list(batch.items_json)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="retrieval") from exc
