"""Chat over the memories: a question answered by a language model from retrieved memories."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.limits import ATTRIBUTION_MAX, NAMESPACE_MAX, NAMESPACE_PATTERN


class ChatTurn(BaseModel):
    model_config = ConfigDict(allow_inf_nan=False, extra="forbid")

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=20_000)


class ChatRequest(BaseModel):
    model_config = ConfigDict(
        allow_inf_nan=False,
        extra="forbid",
        json_schema_extra={"examples": [{"message": "What did we decide about the event bus?"}]},
    )

    message: str = Field(min_length=1, max_length=8_000)
    history: list[ChatTurn] = Field(default_factory=list, max_length=50)
    conversation_id: str | None = Field(default=None, max_length=ATTRIBUTION_MAX)
    namespace: str | None = Field(
        default=None,
        min_length=1,
        max_length=NAMESPACE_MAX,
        pattern=NAMESPACE_PATTERN,
        description="Retrieve from this namespace only; omitted: every namespace (as search).",
    )
    limit: int = Field(default=5, ge=1, le=20, description="How many memories to retrieve.")


class ChatSource(BaseModel):
    id: str
    preview: str
    score: float
    tags: list[str]
    created_at: datetime | None = None


class ChatResponse(BaseModel):
    response: str
    sources: list[ChatSource]
    conversation_id: str
    provider: str
    model: str
