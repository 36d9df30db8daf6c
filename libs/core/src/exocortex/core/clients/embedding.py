from __future__ import annotations

import grpc

from exocortex.core.domain.vectors import Vector, from_bytes
from exocortex.core.errors import Unavailable
from exocortex.core.rpc.errors import from_rpc_error
from exocortex.proto.v1 import embedding_pb2, embedding_pb2_grpc


class EmbeddingClient:
    def __init__(self, channel: grpc.aio.Channel, *, timeout: float = 30.0) -> None:
        self._stub = embedding_pb2_grpc.EmbeddingStub(channel)
        self._timeout = timeout
        self.fingerprint = ""
        self.dimensions = 0

    async def embed(
        self,
        texts: list[str],
        *,
        query: bool = False,
        deadline_seconds: float | None = None,
        bulk: bool = False,
    ) -> list[Vector]:
        """Vectors of ``texts``; ``deadline_seconds`` overrides the client's deadline (bulk
        calls need longer). ``bulk`` passages wait behind single writes' (see the service)."""
        if not texts:
            return []
        kind = embedding_pb2.EMBED_KIND_QUERY if query else _passage(bulk)
        reply = await self._embed(
            embedding_pb2.EmbedRequest(texts=texts, kind=kind), deadline_seconds
        )
        return [from_bytes(v) for v in reply.vectors]

    async def embed_with_tokens(
        self, texts: list[str], *, deadline_seconds: float | None = None, bulk: bool = False
    ) -> tuple[list[Vector], list[bytes] | None]:
        """Passage vectors of ``texts`` and, from the same run of the model, each text's token
        vectors packed as ``token_vectors.pack`` does (None when the service's encoder cannot
        give them)."""
        if not texts:
            return [], []
        request = embedding_pb2.EmbedRequest(texts=texts, kind=_passage(bulk), with_tokens=True)
        reply = await self._embed(request, deadline_seconds)
        vectors = [from_bytes(v) for v in reply.vectors]
        tokens = list(reply.tokens) if len(reply.tokens) == len(texts) else None
        return vectors, tokens

    async def _embed(
        self, request: embedding_pb2.EmbedRequest, deadline_seconds: float | None
    ) -> embedding_pb2.EmbedResponse:
        """One Embed call; the model it ran is remembered (``fingerprint``, ``dimensions``)."""
        try:
            reply: embedding_pb2.EmbedResponse = await self._stub.Embed(
                request, timeout=deadline_seconds or self._timeout
            )
        except grpc.aio.AioRpcError as exc:
            error = from_rpc_error(exc, peer="embedding")
            if isinstance(error, Unavailable):
                raise Unavailable(
                    "the embedding service is unavailable, so nothing was stored or searched "
                    "semantically; try again when it is back"
                ) from exc
            raise error from exc
        self.fingerprint = reply.model.fingerprint
        self.dimensions = reply.model.dimensions
        return reply

    async def model_info(self) -> embedding_pb2.ModelInfo:
        try:
            info: embedding_pb2.ModelInfo = await self._stub.GetModelInfo(
                embedding_pb2.GetModelInfoRequest(), timeout=self._timeout
            )
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="embedding") from exc
        self.fingerprint = info.fingerprint
        self.dimensions = info.dimensions
        return info


def _passage(bulk: bool) -> embedding_pb2.EmbedKind.ValueType:
    return embedding_pb2.EMBED_KIND_BULK_PASSAGE if bulk else embedding_pb2.EMBED_KIND_PASSAGE
