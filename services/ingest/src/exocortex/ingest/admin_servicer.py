"""gRPC ↔ AdminService conversion only."""

from __future__ import annotations

import grpc

from exocortex.ingest.admin import AdminService
from exocortex.proto.v1 import admin_pb2, admin_pb2_grpc


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
