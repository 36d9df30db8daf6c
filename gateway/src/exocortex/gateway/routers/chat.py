"""RAG chat: retrieve memories for the message, then ask the configured LLM with them as
context. Memory content leaves the machine only here, and only when a key is configured."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from fastapi import APIRouter

from exocortex.api.chat import ChatRequest, ChatResponse
from exocortex.core.domain.text import strip_private
from exocortex.core.errors import InvalidArgument
from exocortex.gateway import convert, llm
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import admin_pb2, retrieval_pb2

router = APIRouter(tags=["chat"])

SYSTEM_PROMPT = (
    "You are a helpful assistant with access to the user's stored memories. Answer using the "
    "memories below when they are relevant, cite them as [1], [2], ... and say so when they do "
    "not contain the answer.\n\nMemories:\n"
)
MAX_CONTEXT_CHARS = 2_000


def system_prompt(results: list[retrieval_pb2.SearchResult]) -> str:
    lines = [
        f"[{i}] {r.memory.content[:MAX_CONTEXT_CHARS]}" for i, r in enumerate(results, start=1)
    ]
    return SYSTEM_PROMPT + ("\n".join(lines) if lines else "(none found)")


def private_removed(body: ChatRequest) -> tuple[str, list[tuple[str, str]]]:
    """The message and history as they may leave the machine: without private blocks (a turn
    left empty is dropped; a message left empty is refused, naming the field)."""
    message = strip_private(body.message)
    if not message:
        raise InvalidArgument(
            "message is empty after removing <private> blocks; ask with some public text",
            field="message",
        )
    history = [(turn.role, strip_private(turn.content)) for turn in body.history]
    return message, [(role, content) for role, content in history if content]


@router.post("/api/chat", response_model=ChatResponse)
async def chat(body: ChatRequest, backends: BackendsDep) -> dict[str, Any]:
    """Needs `ai.api_key` in settings (400 naming it otherwise). Providers: `anthropic`
    (default) or `openai` via `ai.provider`; `ai.model` picks the model."""
    timeout = backends.settings.rpc_timeout_seconds
    settings: admin_pb2.SettingsResponse = await backends.admin.GetSettings(
        admin_pb2.GetSettingsRequest(), timeout=timeout
    )
    config = llm.LlmConfig.from_settings(dict(settings.values))
    message, history = private_removed(body)
    found: retrieval_pb2.SearchResponse = await backends.retrieval.Search(
        retrieval_pb2.SearchRequest(
            query=message, namespace=body.namespace or "", limit=body.limit
        ),
        timeout=timeout,
    )
    results = list(found.results)
    async with httpx.AsyncClient(timeout=backends.settings.chat_timeout_seconds) as client:
        answer = await llm.complete(
            client,
            config,
            system_prompt(results),
            history,
            message,
        )
    return {
        "response": answer,
        "sources": [convert.compact_result(r) for r in results],
        "conversation_id": body.conversation_id or str(uuid.uuid4()),
        "provider": config.provider,
        "model": config.model,
    }
