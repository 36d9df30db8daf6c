"""Registers the goal, entity and admin servicers next to Ingest on one gRPC server."""

from __future__ import annotations

from collections.abc import Callable

from exocortex.core.db.pool import Pool
from exocortex.core.rpc.server import GrpcServer
from exocortex.ingest.admin import AdminService
from exocortex.ingest.admin_servicer import AdminServicer
from exocortex.ingest.entities import EntityService
from exocortex.ingest.entities_servicer import EntityAdminServicer
from exocortex.ingest.goals import GoalService
from exocortex.ingest.goals_servicer import GoalsServicer, StoreMemory
from exocortex.proto.v1 import admin_pb2_grpc, entities_pb2_grpc, goals_pb2_grpc


def register_admin_services(
    server: GrpcServer,
    pool: Pool,
    store_memory: StoreMemory,
    on_settings_change: Callable[[], None] | None = None,
) -> list[str]:
    """Add the servicers; returns their full names for the health service."""
    server.register(
        goals_pb2_grpc.add_GoalsServicer_to_server, GoalsServicer(GoalService(pool), store_memory)
    )
    server.register(
        entities_pb2_grpc.add_EntityAdminServicer_to_server,
        EntityAdminServicer(EntityService(pool)),
    )
    server.register(
        admin_pb2_grpc.add_AdminServicer_to_server,
        AdminServicer(AdminService(pool, on_settings_change)),
    )
    return ["exocortex.v1.Goals", "exocortex.v1.EntityAdmin", "exocortex.v1.Admin"]
