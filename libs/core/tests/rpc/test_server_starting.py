"""A service listens before its dependencies are ready: health says NOT_SERVING and calls are
refused as unavailable (callers retry those); once it starts, the same port serves."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from exocortex.core.errors import Unavailable
from exocortex.core.rpc.client import check_health, open_channel
from exocortex.core.rpc.errors import from_rpc_error
from exocortex.core.rpc.server import GrpcServer
from exocortex.proto.v1 import embedding_pb2, embedding_pb2_grpc


class _Model(embedding_pb2_grpc.EmbeddingServicer):
    async def Embed(
        self, request: embedding_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.EmbedResponse:
        return embedding_pb2.EmbedResponse()

    async def GetModelInfo(
        self, request: embedding_pb2.GetModelInfoRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.ModelInfo:
        return embedding_pb2.ModelInfo(name="probe", dimensions=3)


async def _status(channel: grpc.aio.Channel) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=""), timeout=5
    )
    return int(reply.status)


async def test_a_listening_server_is_starting_until_it_serves() -> None:
    server = GrpcServer("embedding", "127.0.0.1:0")
    await server.listen()
    channel = open_channel(f"127.0.0.1:{server.port}")
    stub = embedding_pb2_grpc.EmbeddingStub(channel)
    try:
        assert await _status(channel) == health_pb2.HealthCheckResponse.NOT_SERVING
        assert await check_health(channel) == "starting"
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetModelInfo(embedding_pb2.GetModelInfoRequest(), timeout=5)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert isinstance(from_rpc_error(refused.value, peer="embedding"), Unavailable)

        # Registered after the port opened: grpc-aio alone would only take it before.
        server.register(embedding_pb2_grpc.add_EmbeddingServicer_to_server, _Model())
        await server.start(["exocortex.v1.Embedding"])
        assert await _status(channel) == health_pb2.HealthCheckResponse.SERVING
        assert await check_health(channel) == "ok"
        info = await stub.GetModelInfo(embedding_pb2.GetModelInfoRequest(), timeout=5)
        assert info.name == "probe"
    finally:
        await server.stop(0)
        await server.stop(0)  # idempotent: an exit stack may stop it again
        await channel.close()
    assert await check_health(open_channel(f"127.0.0.1:{server.port}"), 0.5) == "down"
