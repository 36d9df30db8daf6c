"""Runtime settings (the `settings` table): read masked, checked against the typed schema of
every setting, written through ingest."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, HTTPException, Request

from exocortex.core.domain import setting_schema
from exocortex.core.domain.secrets import MASK, mask_settings
from exocortex.core.errors import InvalidArgument
from exocortex.gateway.backends import Backends
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
    request: Request,
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
    """Upserts the given settings and returns all of them, masked. Each key must be a known
    setting and each value must fit its type and range (400 naming the key). Changing
    `ai.base_url` needs a key for every namespace and the `ai.api_key` in the same request."""
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
        try:
            setting_schema.check(key, value)
        except setting_schema.SettingError as exc:
            raise InvalidArgument(str(exc), field=_printable(exc.key)) from None
        values[key] = value
    if DESTINATION.intersection(values):
        await _check_destination_change(request, backends, values)
    reply: admin_pb2.SettingsResponse = await backends.admin.UpdateSettings(
        admin_pb2.UpdateSettingsRequest(values=values),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return mask_settings(dict(reply.values))


BASE_URL, PROVIDER, API_KEY = "ai.base_url", "ai.provider", "ai.api_key"
# The settings that decide which host the chat sends the stored LLM key to (the provider picks
# the default host when no base URL is set).
DESTINATION = frozenset({BASE_URL, PROVIDER})


def _printable(key: str) -> str:
    return key.replace("\x00", "\\u0000")


async def _check_destination_change(
    request: Request, backends: Backends, values: dict[str, str]
) -> None:
    """The chat sends the stored LLM key to ``ai.base_url`` (or the provider's own host when
    it is empty): pointing it elsewhere is an administrator's act, and never takes the stored
    key along. The caller re-enters the key (or clears it with "") in the same request; a
    masked key sent back does not count."""
    current: admin_pb2.SettingsResponse = await backends.admin.GetSettings(
        admin_pb2.GetSettingsRequest(), timeout=backends.settings.rpc_timeout_seconds
    )
    changed = sorted(
        key
        for key in DESTINATION.intersection(values)
        if values[key].rstrip("/") != current.values.get(key, "").rstrip("/")
    )
    if not changed:
        return
    field = changed[0]
    principal = getattr(request.state, "principal", None)
    if principal is not None and (not principal.can_write or principal.namespaces is not None):
        raise HTTPException(
            403,
            {
                "detail": f"changing {field} needs a read-write key for every namespace",
                "field": field,
            },
        )
    if API_KEY not in values:
        raise InvalidArgument(
            f"changing {field} would send the stored ai.api_key to another host: send "
            'ai.api_key again in the same request (or "" to clear it)',
            field=field,
        )
