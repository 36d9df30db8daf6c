"""Calls to the configured LLM provider (Anthropic Messages or OpenAI chat completions) over
httpx. Settings: ``ai.provider`` (anthropic | openai), ``ai.model``, ``ai.api_key`` and, for a
compatible proxy or local server, ``ai.base_url``. Errors never carry the key or the
provider's response body."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from exocortex.core.errors import ExoError, InvalidArgument

PROVIDERS = ("anthropic", "openai")
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5-20250929", "openai": "gpt-4o-mini"}
DEFAULT_BASE_URLS = {"anthropic": "https://api.anthropic.com", "openai": "https://api.openai.com"}
ANTHROPIC_VERSION = "2023-06-01"
MAX_TOKENS = 1024


class UpstreamError(ExoError):
    """The provider could not be reached or refused the call (HTTP 502)."""

    code = "bad_gateway"


@dataclass(frozen=True)
class LlmConfig:
    provider: str
    model: str
    api_key: str
    base_url: str

    @classmethod
    def from_settings(cls, values: dict[str, str]) -> LlmConfig:
        api_key = values.get("ai.api_key", "").strip()
        if not api_key:
            raise InvalidArgument(
                "no AI API key is configured: set ai.api_key (and optionally ai.provider, "
                "ai.model) with PATCH /api/settings",
                field="ai.api_key",
            )
        provider = (values.get("ai.provider") or "anthropic").strip().lower()
        if provider not in PROVIDERS:
            raise InvalidArgument(
                f"ai.provider must be one of: {', '.join(PROVIDERS)}", field="ai.provider"
            )
        model = (values.get("ai.model") or "").strip() or DEFAULT_MODELS[provider]
        base_url = (values.get("ai.base_url") or "").strip() or DEFAULT_BASE_URLS[provider]
        return cls(provider, model, api_key, base_url.rstrip("/"))


@dataclass(frozen=True)
class LlmRequest:
    url: str
    headers: dict[str, str]
    body: dict[str, Any]


def build_request(
    config: LlmConfig, system: str, history: list[tuple[str, str]], message: str
) -> LlmRequest:
    turns = [{"role": role, "content": content} for role, content in history]
    turns.append({"role": "user", "content": message})
    if config.provider == "anthropic":
        return LlmRequest(
            url=f"{config.base_url}/v1/messages",
            headers={
                "x-api-key": config.api_key,
                "anthropic-version": ANTHROPIC_VERSION,
                "content-type": "application/json",
            },
            body={
                "model": config.model,
                "max_tokens": MAX_TOKENS,
                "system": system,
                "messages": turns,
            },
        )
    return LlmRequest(
        url=f"{config.base_url}/v1/chat/completions",
        headers={"authorization": f"Bearer {config.api_key}", "content-type": "application/json"},
        body={
            "model": config.model,
            "max_tokens": MAX_TOKENS,
            "messages": [{"role": "system", "content": system}, *turns],
        },
    )


def parse_reply(provider: str, payload: Any) -> str:
    try:
        if provider == "anthropic":
            return "".join(
                part.get("text", "") for part in payload["content"] if part.get("type") == "text"
            )
        return str(payload["choices"][0]["message"]["content"] or "")
    except (KeyError, IndexError, TypeError) as exc:
        raise UpstreamError(f"the {provider} API answered in an unexpected shape") from exc


async def complete(
    client: httpx.AsyncClient,
    config: LlmConfig,
    system: str,
    history: list[tuple[str, str]],
    message: str,
) -> str:
    request = build_request(config, system, history, message)
    try:
        response = await client.post(request.url, headers=request.headers, json=request.body)
    except httpx.HTTPError as exc:
        raise UpstreamError(
            f"could not reach the {config.provider} API ({type(exc).__name__}); "
            "check ai.base_url and the network"
        ) from exc
    if response.status_code in (401, 403):
        raise UpstreamError(
            f"the {config.provider} API rejected the key (HTTP {response.status_code}); "
            "check ai.api_key"
        )
    if response.status_code >= 400:
        raise UpstreamError(
            f"the {config.provider} API answered HTTP {response.status_code}; "
            "check ai.model and try again"
        )
    try:
        payload = response.json()
    except ValueError as exc:
        raise UpstreamError(f"the {config.provider} API did not answer with JSON") from exc
    return parse_reply(config.provider, payload)
