"""gRPC ↔ service conversion only."""

from __future__ import annotations

import grpc

from exocortex.core.domain import token_vectors
from exocortex.core.domain.vectors import to_bytes
from exocortex.embedding.service import BULK, PASSAGE, QUERY, MicroBatcher, validate_texts
from exocortex.embedding.settings import EmbeddingSettings
from exocortex.encoders import ModelInfo
from exocortex.proto.v1 import embedding_pb2, embedding_pb2_grpc

# What a request's kind asks of the batcher (an unknown or unset kind is a passage).
_PRIORITY = {
    embedding_pb2.EMBED_KIND_QUERY: QUERY,
    embedding_pb2.EMBED_KIND_PASSAGE: PASSAGE,
    embedding_pb2.EMBED_KIND_BULK_PASSAGE: BULK,
}


class EmbeddingServicer(embedding_pb2_grpc.EmbeddingServicer):
    def __init__(self, batcher: MicroBatcher, info: ModelInfo, settings: EmbeddingSettings) -> None:
        self._batcher = batcher
        self._info = embedding_pb2.ModelInfo(
            name=info.name, dimensions=info.dimensions, fingerprint=info.fingerprint
        )
        self._settings = settings

    async def Embed(
        self, request: embedding_pb2.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.EmbedResponse:
        texts = list(request.texts)
        validate_texts(
            texts,
            max_texts=self._settings.max_texts_per_request,
            max_chars=self._settings.max_chars_per_text,
        )
        priority = _PRIORITY.get(request.kind, PASSAGE)
        if not request.with_tokens:
            vectors = await self._batcher.embed(texts, priority=priority)
            return embedding_pb2.EmbedResponse(
                vectors=[to_bytes(v) for v in vectors], model=self._info
            )
        vectors, tokens = await self._batcher.embed_with_tokens(texts, priority=priority)
        return embedding_pb2.EmbedResponse(
            vectors=[to_bytes(v) for v in vectors],
            model=self._info,
            tokens=[token_vectors.pack(t) for t in tokens or []],
        )

    async def GetModelInfo(
        self, request: embedding_pb2.GetModelInfoRequest, context: grpc.aio.ServicerContext
    ) -> embedding_pb2.ModelInfo:
        return self._info
