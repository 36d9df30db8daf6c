"""Settings shared by every process. Built once in each ``__main__`` and passed down.

Each service subclasses :class:`CommonSettings` in its own ``settings.py``. Values come from
``EXO_*`` environment variables (and a ``.env`` file when present); nothing reads the environment
at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATA_DIR = Path.home() / ".exocortex"

# The event loops a process can run on (see exocortex.core.process).
EventLoop = Literal["uvloop", "asyncio"]

# Default listen/dial addresses of the gRPC services and their metrics ports. One table, so the
# embedded runner, the services and the clients agree.
DEFAULT_GRPC_PORTS = {
    "embedding": 50051,
    "ingest": 50052,
    "retrieval": 50053,
    "enrichment": 50054,
    "maintenance": 50055,
}
DEFAULT_METRICS_PORTS = {
    "embedding": 9101,
    "ingest": 9102,
    "retrieval": 9103,
    "enrichment": 9104,
    "maintenance": 9105,
}


class CommonSettings(BaseSettings):
    """What every process needs: where the backing stores are and how to log."""

    model_config = SettingsConfigDict(env_prefix="EXO_", env_file=".env", extra="ignore")

    database_url: str = "postgresql://postgres@127.0.0.1:5433/exocortex"
    nats_url: str = "nats://127.0.0.1:4223"
    data_dir: Path = DEFAULT_DATA_DIR
    log_format: str = Field(default="auto", pattern="^(auto|json|console)$")
    log_level: str = "info"
    # uvloop runs each I/O callback in C; "asyncio" is the standard library's loop (see process).
    event_loop: EventLoop = "uvloop"

    embedding_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORTS['embedding']}"
    ingest_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORTS['ingest']}"
    retrieval_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORTS['retrieval']}"
    enrichment_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORTS['enrichment']}"
    maintenance_addr: str = f"127.0.0.1:{DEFAULT_GRPC_PORTS['maintenance']}"


class GrpcServiceSettings(CommonSettings):
    """A process that serves gRPC (plus health) and Prometheus metrics."""

    # Overridden per service via EXO_<PART>_LISTEN / EXO_<PART>_METRICS_PORT (see each settings.py).
    listen: str = "127.0.0.1:0"
    metrics_port: int = 0
    # Loopback unless told otherwise (EXO_METRICS_HOST): the metrics name the namespaces in use
    # and the load, which is nobody else's business on a shared machine. Compose sets 0.0.0.0
    # so Prometheus can scrape over the internal network.
    metrics_host: str = "127.0.0.1"
    shutdown_grace_seconds: float = 5.0
