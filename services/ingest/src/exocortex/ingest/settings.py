from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings
from exocortex.core.reference_env import env


class IngestSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['ingest']}",
        validation_alias=AliasChoices("EXO_INGEST_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["ingest"],
        validation_alias=AliasChoices("EXO_INGEST_METRICS_PORT"),
    )
    max_content_chars: int = Field(
        default=200_000, validation_alias=AliasChoices("EXO_MAX_CONTENT_CHARS")
    )
    # The one folder whose files a caller may name instead of sending their content (markdown
    # ingest, session digests); unset, this process reads no file a caller names.
    import_root: Path | None = Field(default=None, validation_alias=AliasChoices("EXO_IMPORT_ROOT"))
    # The relay also polls, so events written by other processes are published promptly even
    # if a notification is missed.
    relay_poll_seconds: float = 1.0
    relay_batch: int = 500
    db_pool_size: int = 10
    # Semantic dedup asks the retrieval service; a slow answer must not hold up writes.
    nearest_timeout_seconds: float = 2.0
    # Attribution for writes that name none (as the MCP adapter does for its calls).
    default_provider: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_PROVIDER"))
    default_model_id: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_MODEL_ID"))
    default_model_name: str | None = Field(
        default=None, validation_alias=env("EXO_DEFAULT_MODEL_NAME")
    )
    default_agent: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_AGENT"))

    def default_attribution(self) -> dict[str, str]:
        values = {
            "provider": self.default_provider,
            "model_id": self.default_model_id,
            "model_name": self.default_model_name,
            "agent": self.default_agent,
        }
        return {k: v for k, v in values.items() if v}
