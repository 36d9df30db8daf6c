"""Wires the embedding service: model → micro-batcher → gRPC server."""

from __future__ import annotations

import asyncio

from exocortex.core.logging import get_logger
from exocortex.core.process import serve_metrics
from exocortex.core.rpc.server import GrpcServer
from exocortex.embedding.encoder import load_encoder, query_encoder_factory
from exocortex.embedding.service import MicroBatcher
from exocortex.embedding.servicer import EmbeddingServicer
from exocortex.embedding.settings import EmbeddingSettings
from exocortex.encoders import bundled_model_path
from exocortex.proto.v1 import embedding_pb2_grpc

log = get_logger(__name__)


async def run(settings: EmbeddingSettings, stop: asyncio.Event) -> None:
    # Listening while the model loads: meanwhile health says NOT_SERVING ("starting").
    server = GrpcServer("embedding", settings.listen)
    await server.listen()
    path = settings.model_path or bundled_model_path()
    cache_dir = settings.cache_dir or settings.data_dir / "models"
    model = await asyncio.to_thread(
        load_encoder,
        path,
        backend=settings.backend,
        threads=settings.threads,
        cache_dir=cache_dir,
        precision=settings.precision,
    )
    # Warm up once so the first real request does not pay for lazy initialisation.
    await asyncio.to_thread(model.encode, ["warm up"])
    log.info(
        "model loaded",
        model=model.info.name,
        dimensions=model.info.dimensions,
        encoder=type(model).__name__,
        precision=settings.precision,
    )
    batcher = MicroBatcher(
        model,
        max_batch=settings.max_batch,
        max_wait_ms=settings.max_wait_ms,
        query_model=query_encoder_factory(
            path, model, threads=settings.threads, cache_dir=cache_dir, precision=settings.precision
        ),
        passage_calls=settings.threads,
    )
    batcher.start()
    server.register(
        embedding_pb2_grpc.add_EmbeddingServicer_to_server,
        EmbeddingServicer(batcher, model.info, settings),
    )
    serve_metrics(settings.metrics_port, settings.metrics_host)
    await server.start(["exocortex.v1.Embedding"])
    try:
        await stop.wait()
    finally:
        await server.stop(settings.shutdown_grace_seconds)
        await batcher.stop()
