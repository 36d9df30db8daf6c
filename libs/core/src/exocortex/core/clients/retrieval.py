"""What other services ask the retrieval service: nearest neighbours over a namespace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from exocortex.core.domain.vectors import Vector, to_bytes
from exocortex.core.rpc.errors import from_rpc_error
from exocortex.proto.v1 import retrieval_pb2, retrieval_pb2_grpc

# Extra time a background Nearest may take: it first waits for searches to pause.
BACKGROUND_GRACE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory_id: str
    parent_id: str | None
    similarity: float

    @property
    def root_id(self) -> str:
        return self.parent_id or self.memory_id


class RetrievalClient:
    def __init__(self, channel: grpc.aio.Channel, *, timeout: float = 3.0) -> None:
        self._stub = retrieval_pb2_grpc.RetrievalStub(channel)
        self._timeout = timeout

    async def nearest(
        self,
        vectors: Sequence[Vector],
        *,
        namespace: str,
        limit: int,
        min_similarity: float = 0.0,
        content_type: str | None = None,
        tags: Sequence[str] = (),
        exclude_ids: Sequence[Sequence[str]] | None = None,
        roots_only: bool = False,
        exclude_metadata: bool = False,
        background: bool = False,
    ) -> list[list[Neighbour]]:
        """Neighbours of each vector, best first. Raises a domain error when retrieval is away;
        callers on the write path treat that as "no neighbours known" rather than failing."""
        request = retrieval_pb2.NearestRequest(
            namespace=namespace,
            limit=limit,
            tags=list(tags),
            min_similarity=min_similarity,
            roots_only=roots_only,
            exclude_metadata=exclude_metadata,
            background=background,
        )
        if content_type is not None:
            request.content_type = content_type
        for i, vector in enumerate(vectors):
            request.queries.add(
                vector=to_bytes(vector),
                exclude_ids=list(exclude_ids[i]) if exclude_ids is not None else [],
            )
        try:
            timeout = self._timeout + BACKGROUND_GRACE_SECONDS if background else self._timeout
            reply = await self._stub.Nearest(request, timeout=timeout)
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc, peer="retrieval") from exc
        return [
            [
                Neighbour(
                    h.memory_id, h.parent_id if h.HasField("parent_id") else None, h.similarity
                )
                for h in result.hits
            ]
            for result in reply.results
        ]
