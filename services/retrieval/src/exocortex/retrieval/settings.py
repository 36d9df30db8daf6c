from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field

from exocortex.core.bus import subjects
from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings
from exocortex.core.domain.vectors import Precision


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
    # The embedded keyword engine (tantivy) commits the writes of many projector batches
    # together: when a search needs them, this long after the first one, or once 2,000 wait
    # (see exocortex.indexes.shared_commits). A store is searchable the moment it is applied;
    # its event is acked after the commit. 0: one commit per batch, as index servers do.
    keyword_commit_delay_seconds: float = Field(
        default=0.5,
        ge=0,
        le=10,
        validation_alias=AliasChoices("EXO_RETRIEVAL_KEYWORD_COMMIT_DELAY_SECONDS"),
    )
    # With shared commits: a memory someone waits for (a store, an edit) is projected from
    # Postgres at once, ahead of its event (see exocortex.retrieval.projection.ahead).
    project_ahead: bool = Field(
        default=True, validation_alias=AliasChoices("EXO_RETRIEVAL_PROJECT_AHEAD")
    )
    # Projector batches handled at once while their commit is shared (each acked after it).
    projector_in_flight: int = Field(
        default=64, ge=1, validation_alias=AliasChoices("EXO_RETRIEVAL_PROJECTOR_IN_FLIGHT")
    )
    # The JetStream durable the projector consumes through. Replicas on the same index servers
    # share it, so each event is applied once whichever replica takes it; a second deployment
    # with indexes of its own (e.g. a rebuild beside the live one) needs a name of its own.
    # The embedded engines are opened by one process only.
    projector_durable: str = Field(
        default=subjects.RETRIEVAL_PROJECTOR,
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
        validation_alias=AliasChoices("EXO_RETRIEVAL_PROJECTOR_DURABLE"),
    )
    # The embedded vector engine's flush (segments to disk; applied writes already survive a
    # crash of the process through its write-ahead log) stalls searches for 30-50 ms, so it
    # runs once searches pause, and at the latest this long after the first unflushed write.
    # Background work done here for enrichment (its neighbour lookups, the index writes of its
    # results) waits until no search ran for background_quiet_seconds, at most
    # background_max_wait_seconds each step (see priority).
    background_quiet_seconds: float = Field(
        default=0.25, ge=0, validation_alias=AliasChoices("EXO_RETRIEVAL_BACKGROUND_QUIET_SECONDS")
    )
    background_max_wait_seconds: float = Field(
        default=2.0,
        ge=0,
        validation_alias=AliasChoices("EXO_RETRIEVAL_BACKGROUND_MAX_WAIT_SECONDS"),
    )
    vector_flush_max_age_seconds: float = Field(
        default=60.0,
        gt=0,
        validation_alias=AliasChoices("EXO_RETRIEVAL_VECTOR_FLUSH_MAX_AGE_SECONDS"),
    )
    # How often the reconciler compares the indexes with Postgres and repairs what differs
    # (it also runs on start); see reconciler.
    reconcile_interval_seconds: float = Field(
        default=300.0,
        gt=0,
        validation_alias=AliasChoices("EXO_RETRIEVAL_RECONCILE_INTERVAL_SECONDS"),
    )
    # What search keeps in memory between searches, read from Postgres otherwise: the token
    # vectors of re-scored memories (int8, about 12 KB a memory of 30 tokens) and the stored
    # vectors of arrival neighbours (1.5 KB each at 384 dimensions). At 10k memories, keeping
    # them (128 and 48 MB) instead of 2,048 and 4,096 entries cut the CPU a search takes by a
    # tenth (docs/benchmarks/search-latency.md). 0 keeps none.
    token_cache_mb: int = Field(
        default=128, ge=0, validation_alias=AliasChoices("EXO_RETRIEVAL_TOKEN_CACHE_MB")
    )
    vector_cache_mb: int = Field(
        default=48, ge=0, validation_alias=AliasChoices("EXO_RETRIEVAL_VECTOR_CACHE_MB")
    )
    # Candidates fetched from each index per requested result (over-fetch before fusion).
    overfetch_factor: int = 5
    min_candidates: int = 50
    # local: search queries are embedded in this process by the embedding service's own model
    # (its ONNX export, verified against the service at start-up; no round trip per query);
    # remote: every query is sent to the embedding service. local falls back to remote, with
    # a warning, when the model cannot be loaded here or does not match the service's.
    query_encoder: Literal["local", "remote"] = Field(
        default="local", validation_alias=AliasChoices("EXO_RETRIEVAL_QUERY_ENCODER")
    )
    # int8: the local copy runs 8-bit weights, about half the CPU of the full model on a short
    # query at the same recall (see query_encoder); float32: the service's exact vectors.
    query_encoder_precision: Precision = Field(
        default="int8", validation_alias=AliasChoices("EXO_RETRIEVAL_QUERY_ENCODER_PRECISION")
    )
    # One thread: with the 8-bit copy a second thread no longer shortens a short query's
    # embedding, and its hand-offs cost CPU the concurrent index searches need (alternating
    # runs at 100k: p50/p95 32/42 ms with 1 thread, 35/46-50 ms with 2).
    query_encoder_threads: int = Field(
        default=1, ge=1, validation_alias=AliasChoices("EXO_RETRIEVAL_QUERY_ENCODER_THREADS")
    )
    # The embedding service's model and ONNX cache, read from the same variables it reads.
    embedding_model_path: Path | None = Field(
        default=None, validation_alias=AliasChoices("EXO_EMBEDDING_MODEL_PATH")
    )
    embedding_cache_dir: Path | None = Field(
        default=None, validation_alias=AliasChoices("EXO_EMBEDDING_CACHE_DIR")
    )
