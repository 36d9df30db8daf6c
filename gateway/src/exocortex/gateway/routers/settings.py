"""Runtime settings (the `settings` table): read masked, written through ingest."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from exocortex.core.domain.secrets import MASK, mask_settings
from exocortex.core.errors import InvalidArgument
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import admin_pb2

router = APIRouter(prefix="/api/settings", tags=["settings"])

SETTINGS_EXAMPLE = {"scoring.rrf_k": "60", "ai.provider": "anthropic", "ai.api_key": "sk••••ef"}


@router.get(
    "",
    response_model=dict[str, str],
    responses={200: {"content": {"application/json": {"example": SETTINGS_EXAMPLE}}}},
)
async def get_settings(backends: BackendsDep) -> dict[str, str]:
    """Every setting. Keys matching `api_key`, `token`, `secret` or `password` are masked:
    `sk-abcdef` → `sk••••ef`, four characters or fewer → `••••`."""
    reply: admin_pb2.SettingsResponse = await backends.admin.GetSettings(
        admin_pb2.GetSettingsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    return mask_settings(dict(reply.values))


@router.patch("", response_model=dict[str, str])
async def update_settings(
    backends: BackendsDep,
    body: Annotated[
        dict[str, Any],
        Body(
            description="A flat object of setting → string value. Values containing `••••` "
            "(a masked secret sent back unchanged) are skipped.",
            examples=[{"ai.provider": "openai", "ai.model": "gpt-4o-mini"}],
        ),
    ],
) -> dict[str, str]:
    """Upserts the given settings and returns all of them, masked."""
    values: dict[str, str] = {}
    for key, value in body.items():
        if not isinstance(value, str):
            raise InvalidArgument(
                f"setting {key!r} must be a string (send numbers and booleans as text, "
                'e.g. "0.5" or "true")',
                field=key,
            )
        if MASK in value:
            continue
        values[key] = value
    request = admin_pb2.UpdateSettingsRequest(values=values)
    reply: admin_pb2.SettingsResponse = await backends.admin.UpdateSettings(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return mask_settings(dict(reply.values))
