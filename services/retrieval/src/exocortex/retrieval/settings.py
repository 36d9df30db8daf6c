from __future__ import annotations

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings


class RetrievalSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['retrieval']}",
        validation_alias=AliasChoices("EXO_RETRIEVAL_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["retrieval"],
        validation_alias=AliasChoices("EXO_RETRIEVAL_METRICS_PORT"),
    )
    # Index servers; when unset, the embedded engines run in this process under data_dir.
    qdrant_url: str | None = None
    qdrant_api_key: str | None = None
    meili_url: str | None = None
    meili_master_key: str | None = None
    db_pool_size: int = 10
    projector_batch: int = 256
    # Candidates fetched from each index per requested result (over-fetch before fusion).
    overfetch_factor: int = 5
    min_candidates: int = 50
