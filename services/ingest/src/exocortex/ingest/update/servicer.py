"""gRPC ↔ service conversion only: the update RPCs of Ingest, and the EntityAdmin and Admin
services."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.db.pool import Pool
from exocortex.core.rpc.records import memory_to_proto
from exocortex.core.rpc.timestamps import set_times
from exocortex.ingest.store import validation
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.servicer import attribution_of
from exocortex.ingest.update.admin import AdminService
from exocortex.ingest.update.entities import EntityChanges, EntityService
from exocortex.ingest.update.links import create_link, delete_link
from exocortex.ingest.update.model import MemoryChanges
from exocortex.ingest.update.service import UpdateService
from exocortex.proto.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    entities_pb2,
    entities_pb2_grpc,
    ingest_pb2,
)


def memory_changes(request: ingest_pb2.UpdateMemoryRequest) -> MemoryChanges:
    return MemoryChanges(
        id=request.id,
        content=request.content if request.HasField("content") else None,
        content_type=request.content_type if request.HasField("content_type") else None,
        tags=tuple(request.tags.values) if request.HasField("tags") else None,
        importance=request.importance if request.HasField("importance") else None,
        valence=request.valence if request.HasField("valence") else None,
        expires_at=request.expires_at.ToDatetime(tzinfo=UTC)
        if request.HasField("expires_at")
        else None,
        source_uri=request.source_uri if request.HasField("source_uri") else None,
        namespace=request.namespace if request.HasField("namespace") else None,
        attribution=attribution_of(request.attribution),
        metadata_patch_json=request.metadata_patch_json,
        is_active=request.is_active if request.HasField("is_active") else None,
        is_metadata=request.is_metadata if request.HasField("is_metadata") else None,
        clear_fields=tuple(request.clear_fields),
    )


def _link(row: dict[str, Any]) -> ingest_pb2.Link:
    created = Timestamp()
    created.FromDatetime(row["created_at"])
    return ingest_pb2.Link(
        source_id=row["source_id"],
        target_id=row["target_id"],
        link_type=row["link_type"],
        strength=float(row["strength"]),
        created_at=created,
    )


class UpdateRpcs:
    """The update RPCs of the Ingest service (joined into one servicer in ``ingest.servicer``)."""

    _updates: UpdateService
    _pool: Pool
    _notify: Callable[[], None]

    async def UpdateMemory(
        self, request: ingest_pb2.UpdateMemoryRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        record = await self._updates.update(memory_changes(request))
        self._notify()
        return ingest_pb2.MemoryReply(memory=memory_to_proto(record))

    async def ArchiveMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        record = await self._updates.set_active(request.id, False)
        self._notify()
        return ingest_pb2.MemoryReply(memory=memory_to_proto(record))

    async def RestoreMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.MemoryReply:
        record = await self._updates.set_active(request.id, True)
        self._notify()
        return ingest_pb2.MemoryReply(memory=memory_to_proto(record))

    async def DeleteMemory(
        self, request: ingest_pb2.MemoryRef, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DeleteMemoryResponse:
        chunks = await self._updates.delete(request.id)
        self._notify()
        return ingest_pb2.DeleteMemoryResponse(id=request.id, chunks_deleted=chunks)

    async def CreateLink(
        self, request: ingest_pb2.CreateLinkRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.Link:
        row = await create_link(
            self._pool,
            request.source_id,
            request.target_id,
            link_type=request.link_type if request.HasField("link_type") else None,
            strength=request.strength if request.HasField("strength") else None,
        )
        return _link(row)

    async def DeleteLink(
        self, request: ingest_pb2.DeleteLinkRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.DeleteLinkResponse:
        deleted = await delete_link(self._pool, request.source_id, request.target_id)
        return ingest_pb2.DeleteLinkResponse(deleted=deleted)

    async def BulkTag(
        self, request: ingest_pb2.BulkTagRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.BulkResponse:
        affected, missing = await self._updates.bulk_tag(
            list(request.ids), list(request.add_tags), list(request.remove_tags)
        )
        self._notify()
        return ingest_pb2.BulkResponse(affected=affected, missing_ids=missing)

    async def BulkUpdate(
        self, request: ingest_pb2.BulkUpdateRequest, context: grpc.aio.ServicerContext
    ) -> ingest_pb2.BulkResponse:
        columns: dict[str, Any] = {
            name: getattr(request, name)
            for name in ("importance", "valence", "is_active")
            if request.HasField(name)
        }
        affected, missing = await self._updates.bulk_update(list(request.ids), columns)
        self._notify()
        return ingest_pb2.BulkResponse(affected=affected, missing_ids=missing)


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


class AdminServicer(admin_pb2_grpc.AdminServicer):
    def __init__(self, service: AdminService) -> None:
        self._service = service

    async def GetSettings(
        self, request: admin_pb2.GetSettingsRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.SettingsResponse:
        return admin_pb2.SettingsResponse(values=await self._service.settings())

    async def UpdateSettings(
        self, request: admin_pb2.UpdateSettingsRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.SettingsResponse:
        values = await self._service.update_settings(dict(request.values))
        return admin_pb2.SettingsResponse(values=values)

    async def ResolveNamespaces(
        self, request: admin_pb2.ResolveNamespacesRequest, context: grpc.aio.ServicerContext
    ) -> admin_pb2.ResolveNamespacesResponse:
        memories, goals, entities = await self._service.namespaces(
            list(request.memory_ids), list(request.goal_ids), list(request.entity_ids)
        )
        return admin_pb2.ResolveNamespacesResponse(
            memories=memories, goals=goals, entities=entities
        )
