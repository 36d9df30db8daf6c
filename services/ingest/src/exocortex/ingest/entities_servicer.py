"""gRPC ↔ EntityService conversion only."""

from __future__ import annotations

import json

import grpc

from exocortex.core.rpc.timestamps import set_times
from exocortex.ingest import validation
from exocortex.ingest.entities import EntityChanges, EntityService, Row
from exocortex.proto.v1 import entities_pb2, entities_pb2_grpc


def entity_proto(row: Row) -> entities_pb2.StoredEntity:
    message = entities_pb2.StoredEntity(
        id=row["id"],
        namespace=row["namespace"],
        name=row["name"],
        type=row["type"],
        aliases=[str(a) for a in (row.get("aliases") or [])],
        tags=list(row.get("tags") or []),
        metadata_json=json.dumps(row.get("metadata") or {}, separators=(",", ":")),
    )
    set_times(message, row, ("created_at", "updated_at"))
    return message


class EntityAdminServicer(entities_pb2_grpc.EntityAdminServicer):
    def __init__(self, service: EntityService) -> None:
        self._service = service

    async def CreateEntity(
        self, request: entities_pb2.CreateEntityRequest, context: grpc.aio.ServicerContext
    ) -> entities_pb2.StoredEntity:
        row = await self._service.create(
            namespace=request.namespace,
            name=request.name,
            type=request.type if request.HasField("type") else None,
            aliases=list(request.aliases),
            tags=list(request.tags),
            metadata=validation.parse_metadata(request.metadata_json),
        )
        return entity_proto(row)

    async def UpdateEntity(
        self, request: entities_pb2.UpdateEntityRequest, context: grpc.aio.ServicerContext
    ) -> entities_pb2.StoredEntity:
        changes = EntityChanges(
            name=request.name if request.HasField("name") else None,
            type=request.type if request.HasField("type") else None,
            aliases=list(request.aliases) if request.set_aliases else None,
            tags=list(request.tags) if request.set_tags else None,
            metadata=validation.parse_metadata(request.metadata_json)
            if request.set_metadata
            else None,
        )
        return entity_proto(await self._service.update(request.id, changes))

    async def DeleteEntity(
        self, request: entities_pb2.DeleteEntityRequest, context: grpc.aio.ServicerContext
    ) -> entities_pb2.DeleteEntityResponse:
        await self._service.delete(request.id)
        return entities_pb2.DeleteEntityResponse()
