"""The runtime settings (``settings`` table) the write path reads, parsed once per use."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from exocortex.core.domain.entities import min_confidence
from exocortex.core.domain.tags import alias_map


def _truthy(value: str | None, default: bool = False) -> bool:
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _float(settings: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(settings.get(key, default))
    except ValueError:
        return default


def _json_list(raw: str | None) -> list[str]:
    try:
        value = json.loads(raw or "[]")
    except json.JSONDecodeError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


@dataclass(frozen=True)
class WriteConfig:
    raw: Mapping[str, str]
    aliases: dict[str, str]
    hash_dedup: bool
    normalize_whitespace: bool
    semantic_dedup: bool
    similarity_threshold: float
    skip_insert_on_match: bool
    keep_variants: bool
    max_variants: int
    merge: bool
    merge_threshold: float
    exempt_tags: frozenset[str]
    chunking: bool
    max_length: int
    target_size: int
    auto_tagging: bool
    benchmark_importance: float
    benchmark_indexed: bool
    benchmark_chunking: bool
    # Token vectors are kept with each memory while search re-scores with them
    # (search.rerank_candidates > 0); turned off, nothing is stored for them.
    keep_tokens: bool = True
    # The confidence an entity in the text needs to be named in the keywords (enrichment's).
    entity_confidence: float = 0.5

    @classmethod
    def from_settings(cls, s: Mapping[str, str]) -> WriteConfig:
        return cls(
            raw=s,
            aliases=alias_map(s),
            hash_dedup=_truthy(s.get("dedup.hash_enabled"), True),
            normalize_whitespace=_truthy(s.get("dedup.hash_normalize_whitespace"), True),
            semantic_dedup=_truthy(s.get("dedup.enabled"), True),
            similarity_threshold=_float(s, "dedup.similarity_threshold", 0.85),
            skip_insert_on_match=_truthy(s.get("dedup.skip_insert_on_match"), True),
            keep_variants=_truthy(s.get("dedup.keep_variants"), True),
            max_variants=max(0, int(_float(s, "dedup.max_variants", 20))),
            merge=_truthy(s.get("dedup.merge_enabled"), False),
            merge_threshold=_float(s, "dedup.merge_threshold", 0.75),
            exempt_tags=frozenset(_json_list(s.get("dedup.exempt_tags"))),
            chunking=_truthy(s.get("chunking.enabled"), True),
            max_length=int(_float(s, "chunking.max_length", 1500)),
            target_size=max(50, int(_float(s, "chunking.target_size", 500))),
            auto_tagging=_truthy(s.get("auto_tagging.enabled"), True),
            benchmark_importance=_float(s, "benchmark.default_importance", 0.15),
            benchmark_indexed=_truthy(s.get("benchmark.indexed"), False),
            benchmark_chunking=_truthy(s.get("benchmark.chunking"), False),
            keep_tokens=_float(s, "search.rerank_candidates", 20) > 0,
            entity_confidence=min_confidence(s),
        )

    @property
    def semantic_floor(self) -> float:
        """The lowest similarity semantic dedup acts on: the merge band starts below the
        duplicate threshold when merge mode is on."""
        if self.merge and self.merge_threshold < self.similarity_threshold:
            return self.merge_threshold
        return self.similarity_threshold
