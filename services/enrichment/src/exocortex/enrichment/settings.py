from __future__ import annotations

from pydantic import AliasChoices, Field

from exocortex.core.config import DEFAULT_GRPC_PORTS, DEFAULT_METRICS_PORTS, GrpcServiceSettings


class EnrichmentSettings(GrpcServiceSettings):
    listen: str = Field(
        default=f"127.0.0.1:{DEFAULT_GRPC_PORTS['enrichment']}",
        validation_alias=AliasChoices("EXO_ENRICHMENT_LISTEN"),
    )
    metrics_port: int = Field(
        default=DEFAULT_METRICS_PORTS["enrichment"],
        validation_alias=AliasChoices("EXO_ENRICHMENT_METRICS_PORT"),
    )
    batch_size: int = Field(default=64, validation_alias=AliasChoices("EXO_ENRICHMENT_BATCH"))
    # After a batch that did not fill, wait this long for more events to enrich together...
    linger_seconds: float = Field(
        default=0.1, validation_alias=AliasChoices("EXO_ENRICHMENT_LINGER_SECONDS")
    )
    # ... and again while each wait brings more, up to this long in all (0: wait once). At 1 s
    # a steady stream of stores is enriched about once a second, in batches that share their
    # fixed costs (6-10% less CPU per single store outside the model, see
    # docs/benchmarks/bulk-import.md); a lone store is still enriched about linger_seconds after
    # it arrives.
    max_linger_seconds: float = Field(
        default=1.0, validation_alias=AliasChoices("EXO_ENRICHMENT_MAX_LINGER_SECONDS")
    )
