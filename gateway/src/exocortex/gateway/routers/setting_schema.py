"""The type and range of every runtime setting, so a client can build a typed form (a switch
for a boolean, a bounded number field, a list of choices) rather than a row of text boxes."""

from __future__ import annotations

import math

from fastapi import APIRouter
from pydantic import BaseModel, Field

from exocortex.core.db.settings_store import DEFAULT_SETTINGS
from exocortex.core.domain import setting_schema
from exocortex.core.domain.secrets import is_secret
from exocortex.core.domain.setting_help import HELP

router = APIRouter(prefix="/api/settings", tags=["settings"])


class SettingSpec(BaseModel):
    kind: str = Field(
        description="boolean, number, integer, choice, text, url, json-list or json-object"
    )
    low: float | None = Field(default=None, description="Smallest number allowed, if bounded")
    high: float | None = Field(default=None, description="Largest number allowed, if bounded")
    choices: list[str] = Field(default_factory=list, description="The allowed values of a choice")
    max_chars: int
    default: str | None = Field(description="The value a new store starts with")
    secret: bool = Field(description="Read back masked (an API key, a token)")
    help: str = Field(description="What the setting does, for a person about to change it")


def _bound(value: float) -> float | None:
    return None if math.isinf(value) else value


@router.get("/schema", response_model=dict[str, SettingSpec])
async def settings_schema() -> dict[str, SettingSpec]:
    """Every setting PATCH /api/settings accepts, with its type, range, default and what it does."""
    return {
        key: SettingSpec(
            kind=spec.kind,
            low=_bound(spec.low),
            high=_bound(spec.high),
            choices=list(spec.choices),
            max_chars=spec.max_chars,
            default=DEFAULT_SETTINGS.get(key),
            secret=is_secret(key),
            help=HELP[key],
        )
        for key, spec in sorted(setting_schema.SCHEMA.items())
    }
