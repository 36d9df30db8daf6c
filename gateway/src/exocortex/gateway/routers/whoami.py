"""What the caller's key may do, so a client (the dashboard) can hide what the key cannot use:
write buttons for a read-only key, other namespaces for a scoped one."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from exocortex.gateway.auth import AuthDep

router = APIRouter(prefix="/api", tags=["auth"])


class WhoAmI(BaseModel):
    name: str = Field(
        description="A fingerprint of the key (never the key); 'anonymous' without keys"
    )
    keys_required: bool = Field(description="Whether this gateway asks every /api call for a key")
    can_write: bool = Field(description="False for a read-only key")
    namespaces: list[str] | None = Field(
        description="The namespaces the key may use, sorted; null for every namespace"
    )


@router.get("/whoami", response_model=WhoAmI)
async def whoami(request: Request, principal: AuthDep) -> WhoAmI:
    """The calling key's rights. Open to every valid key, scoped ones included."""
    return WhoAmI(
        name=principal.name,
        keys_required=request.app.state.keyring.enabled,
        can_write=principal.can_write,
        namespaces=None if principal.namespaces is None else sorted(principal.namespaces),
    )
