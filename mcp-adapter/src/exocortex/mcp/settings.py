"""Settings of the MCP adapter (``EXO_MCP_*``) and the default attribution (``EXO_DEFAULT_*``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from exocortex.core.reference_env import env

DEFAULT_MCP_PORT = 3211


class Attribution(BaseSettings):
    """Who writes: filled in on every write unless the tool call names someone else."""

    model_config = SettingsConfigDict(
        env_prefix="EXO_DEFAULT_", env_file=".env", extra="ignore", populate_by_name=True
    )

    provider: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_PROVIDER"))
    model_id: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_MODEL_ID"))
    model_name: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_MODEL_NAME"))
    agent: str | None = Field(default=None, validation_alias=env("EXO_DEFAULT_AGENT"))
    session_id: str | None = None


class McpSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EXO_MCP_", env_file=".env", extra="ignore")

    gateway_url: str = "http://127.0.0.1:3210"
    # The key the stdio adapter sends, as the one user who launched it. Over HTTP it is never
    # used: each client sends its own key, which the adapter forwards.
    api_key: str | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_MCP_PORT
    # Host header values the HTTP transport answers (DNS-rebinding protection), comma-separated
    # `host:port` (`host:*` for any port). Empty: the loopback names with the served port. Set
    # it to the names clients use when binding 0.0.0.0 (compose, a reverse proxy).
    allowed_hosts: str = ""
    # Every gateway call is bounded, so a stuck backend turns into a tool error, never a hang.
    # A store waits up to ~5 s for read-your-writes, hence the margin.
    timeout_seconds: float = Field(default=30.0, gt=0)
    log_level: str = Field(default="warning", validation_alias="EXO_LOG_LEVEL")
    log_format: str = Field(default="auto", validation_alias="EXO_LOG_FORMAT")

    def allowed_host_list(self, port: int) -> list[str]:
        listed = [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]
        return listed or [f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"]
