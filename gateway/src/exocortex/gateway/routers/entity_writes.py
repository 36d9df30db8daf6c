"""Manual entity edits (served by the ingest service's EntityAdmin RPCs). Reads are in the
entity read router."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, status

from exocortex.api.base import Ok
from exocortex.api.entities import EntityCreate, EntityPatch, EntityRecord
from exocortex.api.limits import ID_MAX
from exocortex.gateway import admin_convert
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import entities_pb2

router = APIRouter(prefix="/api/entities", tags=["entities"])

EntityId = Annotated[str, Path(min_length=1, max_length=ID_MAX, description="Entity id (ULID)")]


@router.post("", status_code=status.HTTP_201_CREATED, response_model=EntityRecord)
async def create_entity(body: EntityCreate, backends: BackendsDep) -> dict[str, Any]:
    """Names are unique per namespace, case-insensitively: a clash is 409."""
    reply = await backends.entity_admin.CreateEntity(
        entities_pb2.CreateEntityRequest(
            namespace=body.namespace,
            name=body.name,
            type=body.type,
            aliases=body.aliases,
            tags=body.tags,
            metadata_json=json.dumps(body.metadata),
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return admin_convert.entity(reply)


@router.patch("/{entity_id}", response_model=EntityRecord)
async def update_entity(
    entity_id: EntityId, body: EntityPatch, backends: BackendsDep
) -> dict[str, Any]:
    request = entities_pb2.UpdateEntityRequest(id=entity_id)
    if body.name is not None:
        request.name = body.name
    if body.type is not None:
        request.type = body.type
    if body.aliases is not None:
        request.set_aliases = True
        request.aliases.extend(body.aliases)
    if body.tags is not None:
        request.set_tags = True
        request.tags.extend(body.tags)
    if body.metadata is not None:
        request.set_metadata = True
        request.metadata_json = json.dumps(body.metadata)
    reply = await backends.entity_admin.UpdateEntity(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return admin_convert.entity(reply)


@router.delete("/{entity_id}", response_model=Ok)
async def delete_entity(entity_id: EntityId, backends: BackendsDep) -> dict[str, Any]:
    """Deletes the entity, its tags, relationships and memory mentions (never memories)."""
    await backends.entity_admin.DeleteEntity(
        entities_pb2.DeleteEntityRequest(id=entity_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return {"ok": True}
