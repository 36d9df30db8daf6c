"""Turning a store request into a validated, normalised memory (no I/O): the per-memory
transforms every entry point shares (single store, import, markdown ingest, session digest)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from exocortex.core.domain.autotags import auto_tags
from exocortex.core.domain.chunking import needs_chunking, split_into_chunks
from exocortex.core.domain.keywords import memory_keywords
from exocortex.core.domain.metadata import BENCHMARK_TAG, infer_is_metadata
from exocortex.core.domain.tags import normalize_tags
from exocortex.core.domain.text import content_hash, strip_private
from exocortex.core.errors import InvalidArgument
from exocortex.core.records import ATTRIBUTION_FIELDS
from exocortex.ingest.store import validation
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import MemoryInput

ATTRIBUTION = ATTRIBUTION_FIELDS

# Semantic dedup ignores very short texts: they are similar to too much.
MIN_SEMANTIC_DEDUP_CHARS = 50


@dataclass
class Prepared:
    content: str
    namespace: str
    content_type: str
    source: str
    source_uri: str | None
    importance: float
    valence: float
    tags: list[str]
    metadata: dict[str, Any]
    is_metadata: bool
    benchmark: bool
    expires_at: datetime | None
    attribution: dict[str, str | None]
    digest: str
    keywords: str
    # Set when the content is split: the parent keeps the text and gets no vector.
    chunks: list[str] = field(default_factory=list)
    embed: bool = True
    # The caller's own tags (before auto-tags): semantic dedup requires sharing one of them.
    given_tags: list[str] = field(default_factory=list)

    def embed_texts(self) -> list[str]:
        if not self.embed:
            return []
        return self.chunks or [self.content]

    def semantic_dedup_eligible(self, config: WriteConfig) -> bool:
        return (
            config.semantic_dedup
            and self.embed
            and not self.chunks
            and len(self.content) >= MIN_SEMANTIC_DEDUP_CHARS
            and not config.exempt_tags.intersection(self.tags)
        )


def clean_content(raw: str, max_chars: int) -> str:
    validation.check_content(raw, max_chars)
    content = strip_private(raw)
    if not content:
        raise InvalidArgument(
            "content is empty after removing <private> blocks; store some public text",
            field="content",
        )
    return content


def chunks_for(content: str, config: WriteConfig, *, benchmark: bool = False) -> list[str]:
    if not config.chunking or (benchmark and not config.benchmark_chunking):
        return []
    if not needs_chunking(content, config.max_length):
        return []
    return split_into_chunks(content, config.target_size)


def with_auto_tags(content: str, tags: list[str], config: WriteConfig) -> list[str]:
    if not config.auto_tagging:
        return tags
    return [*tags, *normalize_tags(auto_tags(content, tags), config.aliases)]


def prepare(
    request: MemoryInput,
    config: WriteConfig,
    *,
    max_chars: int,
    default_attribution: Mapping[str, str] | None = None,
) -> Prepared:
    content = clean_content(request.content, max_chars)
    namespace = validation.check_namespace(request.namespace)
    content_type = validation.check_choice(
        request.content_type if request.content_type is not None else "text",
        validation.CONTENT_TYPES,
        "content_type",
    )
    source = validation.check_choice(
        request.source if request.source is not None else "api", validation.SOURCES, "source"
    )
    validation.check_tags(list(request.tags))
    benchmark = request.benchmark
    tags = normalize_tags([*request.tags, *([BENCHMARK_TAG] if benchmark else [])], config.aliases)
    metadata = validation.parse_metadata(request.metadata_json)
    if benchmark:
        metadata.setdefault("mode", "benchmark")
    default_importance = config.benchmark_importance if benchmark else 0.5
    importance = validation.check_range(
        request.importance if request.importance is not None else default_importance,
        0.0,
        1.0,
        "importance",
    )
    valence = validation.check_range(
        request.valence if request.valence is not None else 0.0, -1.0, 1.0, "valence"
    )
    # Attribution: the explicit field, else the same-named metadata key (model_name also from
    # metadata.model), as the seed did, else the deployment's EXO_DEFAULT_* value.
    attribution: dict[str, str | None] = {}
    given = request.attribution.given()
    for key in ATTRIBUTION:
        if key in given:
            attribution[key] = validation.optional_text(given[key])
        else:
            value = metadata.get(key) or (metadata.get("model") if key == "model_name" else None)
            attribution[key] = validation.optional_text(str(value)) if value else None
        if attribution[key] is None and default_attribution:
            attribution[key] = default_attribution.get(key)
    given_tags = list(tags)
    if not benchmark:
        tags = with_auto_tags(content, tags, config)
    is_metadata = infer_is_metadata(
        explicit=request.is_metadata,
        benchmark=benchmark,
        tags=tags,
        metadata=metadata,
        settings=config.raw,
    )
    return Prepared(
        content=content,
        namespace=namespace,
        content_type=content_type,
        source=source,
        source_uri=validation.optional_text(request.source_uri)
        if request.source_uri is not None
        else None,
        importance=importance,
        valence=valence,
        tags=tags,
        metadata=metadata,
        is_metadata=is_metadata,
        benchmark=benchmark,
        expires_at=request.expires_at,
        attribution=attribution,
        digest=content_hash(content, normalize_whitespace=config.normalize_whitespace),
        keywords=memory_keywords(content, tags, config.entity_confidence),
        chunks=chunks_for(content, config, benchmark=benchmark),
        embed=not benchmark or config.benchmark_indexed,
        given_tags=given_tags,
    )
