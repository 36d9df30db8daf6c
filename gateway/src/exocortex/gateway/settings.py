from __future__ import annotations

from pydantic import AliasChoices, Field

from exocortex.core.config import CommonSettings


class GatewaySettings(CommonSettings):
    host: str = Field(default="127.0.0.1", validation_alias=AliasChoices("EXO_GATEWAY_HOST"))
    port: int = Field(default=3210, validation_alias=AliasChoices("EXO_GATEWAY_PORT"))
    # Read-your-writes: how long a store waits for the memory to become searchable.
    store_wait_ms: int = Field(default=5_000, validation_alias=AliasChoices("EXO_STORE_WAIT_MS"))
    max_body_bytes: int = Field(
        default=5 * 1024 * 1024, validation_alias=AliasChoices("EXO_MAX_BODY_BYTES")
    )
    rpc_timeout_seconds: float = 30.0
