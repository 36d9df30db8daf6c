"""What every request and reply body shares."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from exocortex.api.limits import NAMESPACE_MAX, NAMESPACE_PATTERN


class Strict(BaseModel):
    """A request body: unknown fields and non-finite numbers are refused (400 naming them)."""

    model_config = ConfigDict(allow_inf_nan=False, extra="forbid", str_strip_whitespace=False)


class Ok(BaseModel):
    ok: bool = True


# The namespace of something a body creates (a goal, an entity): a name without spaces or
# slashes, since it is shown and filtered on as typed.
Namespace = Field(
    default="default", min_length=1, max_length=NAMESPACE_MAX, pattern=NAMESPACE_PATTERN
)
