"""A call that fails because Postgres is away (restarting after a crash, refusing or dropping
connections) is reported as UNAVAILABLE, which callers retry and the gateway answers with 503;
any other database failure stays an internal error."""

from __future__ import annotations

import grpc
import psycopg
import pytest
from psycopg import errors
from psycopg_pool import PoolTimeout

from exocortex.core.rpc.client import open_channel
from exocortex.core.rpc.server import GrpcServer
from exocortex.proto.v1 import embedding_pb2, embedding_pb2_grpc


class _Failing(embedding_pb2_grpc.EmbeddingServicer):
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def Embed(
        self, request: embedding_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.EmbedResponse:
        raise self.error

    async def GetModelInfo(
        self, request: embedding_pb2.GetModelInfoRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.ModelInfo:
        raise self.error


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.AdminShutdown("terminating connection"), grpc.StatusCode.UNAVAILABLE),
        (psycopg.OperationalError("connection refused"), grpc.StatusCode.UNAVAILABLE),
        (PoolTimeout("no connection within 30 s"), grpc.StatusCode.UNAVAILABLE),
        (errors.DiskFull("no space left"), grpc.StatusCode.INTERNAL),
    ],
)
async def test_database_away_is_unavailable(error: Exception, status: grpc.StatusCode) -> None:
    server = GrpcServer("embedding", "127.0.0.1:0")
    server.register(embedding_pb2_grpc.add_EmbeddingServicer_to_server, _Failing(error))
    await server.start(["exocortex.v1.Embedding"])
    channel = open_channel(f"127.0.0.1:{server.port}")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await embedding_pb2_grpc.EmbeddingStub(channel).GetModelInfo(
                embedding_pb2.GetModelInfoRequest(), timeout=5
            )
        assert failed.value.code() == status
    finally:
        await channel.close()
        await server.stop(0)
