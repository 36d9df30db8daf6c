from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field

from exocortex.core.config import CommonSettings
from exocortex.core.reference_env import env


class GatewaySettings(CommonSettings):
    host: str = Field(default="127.0.0.1", validation_alias=env("EXO_GATEWAY_HOST"))
    port: int = Field(default=3210, validation_alias=AliasChoices("EXO_GATEWAY_PORT"))
    # Read-your-writes: how long a store waits for the memory to become searchable.
    store_wait_ms: int = Field(default=5_000, validation_alias=AliasChoices("EXO_STORE_WAIT_MS"))
    max_body_bytes: int = Field(
        default=5 * 1024 * 1024, validation_alias=AliasChoices("EXO_MAX_BODY_BYTES")
    )
    # Most memories one bulk import request may carry.
    max_import_batch: int = Field(
        default=1_000, validation_alias=AliasChoices("EXO_MAX_IMPORT_BATCH")
    )
    rpc_timeout_seconds: float = 30.0
    # API keys: "key[:ro|rw[:ns1|ns2|*]]", comma-separated (see docs/api.md). Required when
    # the gateway binds a non-loopback address.
    api_keys: str = Field(default="", validation_alias=AliasChoices("EXO_API_KEYS"))
    # Exact origins allowed to call the API from a browser, comma-separated; empty = CORS off.
    cors_origins: str = Field(default="", validation_alias=env("EXO_CORS_ORIGINS"))
    # A built dashboard to serve at "/" (index.html fallback for client-side routes).
    dashboard_dir: Path | None = Field(
        default=None, validation_alias=AliasChoices("EXO_GATEWAY_DASHBOARD_DIR")
    )
    # The server's import folder: only inside it may a request name a file (`path`,
    # `transcript_path`) instead of sending its content. Ingest, which reads the files, has
    # the same setting and checks again.
    import_root: Path | None = Field(default=None, validation_alias=AliasChoices("EXO_IMPORT_ROOT"))
    # How long a chat waits for the LLM provider.
    chat_timeout_seconds: float = Field(
        default=60.0, validation_alias=AliasChoices("EXO_CHAT_TIMEOUT_SECONDS")
    )
