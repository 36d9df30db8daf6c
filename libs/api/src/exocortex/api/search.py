"""Hybrid search, the context graph, and usefulness feedback."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.limits import (
    FEEDBACK_IDS_MAX,
    LINKED_MAX,
    NAMESPACE_MAX,
    QUERY_MAX,
    SEARCH_LIMIT_MAX,
    SEARCH_OFFSET_MAX,
    TAGS_MAX,
    TOKENS_MAX,
    TOKENS_MIN,
)
from exocortex.api.memories import CompactResult, Memory
from exocortex.api.vocabulary import ContentType, Source


class SearchBody(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"query": "why did we pick NATS?", "limit": 5}]},
    )

    query: str = Field(min_length=1, max_length=QUERY_MAX)
    expanded_query: str | None = Field(
        default=None,
        max_length=QUERY_MAX,
        description="Your own rewording or extra terms: embedded with the query and OR-ed into "
        "the keyword search.",
    )
    limit: int = Field(default=10, ge=1, le=SEARCH_LIMIT_MAX)
    offset: int = Field(default=0, ge=0, le=SEARCH_OFFSET_MAX)
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAMESPACE_MAX,
        description="Only this namespace; omitted or null: every namespace the API key may see.",
    )
    tags: list[str] = Field(default_factory=list, max_length=TAGS_MAX)
    content_type: ContentType | None = None
    source: Source | None = None
    after: str | None = Field(
        default=None, description="Date (whole day in `timezone`) or ISO date-time; inclusive."
    )
    before: str | None = Field(
        default=None, description="Date (whole day in `timezone`) or ISO date-time; exclusive."
    )
    timezone: str = Field(default="UTC", description="IANA zone for bare dates.")
    min_importance: float | None = Field(default=None, ge=0, le=1)
    min_score: float | None = Field(default=None, ge=0)
    include_metadata: bool = False
    compact: bool = False
    max_tokens: int | None = Field(default=None, ge=TOKENS_MIN, le=TOKENS_MAX)
    include_linked: bool = Field(
        default=False, description="Add up to 3 memories linked to the results (1 hop)."
    )


class ContextGraphBody(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")

    query: str = Field(min_length=1, max_length=QUERY_MAX)
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAMESPACE_MAX,
        description="Only this namespace; omitted or null: every namespace the API key may see.",
    )
    limit: int = Field(default=10, ge=1, le=SEARCH_LIMIT_MAX)
    max_tokens: int | None = Field(default=None, ge=TOKENS_MIN, le=TOKENS_MAX)
    compact: bool = False
    max_linked: int = Field(default=5, ge=0, le=LINKED_MAX)


class FeedbackBody(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")

    ids: list[str] = Field(min_length=1, max_length=FEEDBACK_IDS_MAX)


class ScoreBreakdown(BaseModel):
    fused: float
    vector_rank: int | None
    keyword_rank: int | None
    graph_rank: int | None
    recency: float
    frequency: float
    usefulness: float
    valence: float
    tag: float
    graph: float
    metadata_penalty: float
    boost: float
    neighbour: float = Field(
        description="Fused score passed on by strong hits stored right before or after it."
    )
    quality: float = Field(
        description="0..1 from importance, usefulness, use, links and age (a boost signal)."
    )
    goal_relevance: float = Field(
        description="0..1: progress on an active goal (1 logged, 0.7 found by enrichment)."
    )


class SearchResult(BaseModel):
    memory: Memory
    score: float
    vector_score: float
    fts_score: float
    recency_score: float = Field(description="The recency signal (also in the breakdown).")
    frequency_score: float = Field(description="The frequency signal (also in the breakdown).")
    score_breakdown: ScoreBreakdown


class LinkedResult(BaseModel):
    memory: Memory
    score: float = Field(description="The link strength.")
    linked_from: str
    link_type: str


class SearchResponse(BaseModel):
    results: list[SearchResult] | list[CompactResult]
    count: int
    mode: str
    degraded: list[str]
    linked: list[LinkedResult] = Field(default_factory=list)
    expansion_terms: list[str] = Field(
        default_factory=list,
        description="Terms query expansion OR-ed into the keyword search (entity names, "
        "aliases and related entities; tag aliases).",
    )


class ContextGraphResponse(BaseModel):
    results: list[dict[str, Any]] = Field(
        description="Seeds `{memory, score}` (compact: `{id, preview, score, tags, created_at}`)"
        " then linked memories `{memory, score (= link strength), linked_from, link_type}`."
    )
    count: int
    linked_count: int


class FeedbackResponse(BaseModel):
    recorded: int
    recorded_ids: list[str]
    missing_ids: list[str]
