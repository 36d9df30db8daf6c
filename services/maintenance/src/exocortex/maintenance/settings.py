from __future__ import annotations

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings


class MaintenanceSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['maintenance']}",
        validation_alias=AliasChoices("EXO_MAINTENANCE_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["maintenance"],
        validation_alias=AliasChoices("EXO_MAINTENANCE_METRICS_PORT"),
    )
