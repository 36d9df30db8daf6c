"""Manual entity edits: create, rename, retype, aliases, tags, metadata, delete.

Names are unique per namespace, case-insensitively (the schema enforces it); a clash is a
conflict, not a silent merge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from exocortex.core.db.pool import Pool
from exocortex.core.domain.tags import normalize_tags
from exocortex.core.domain.text import strip_private_field
from exocortex.core.errors import Conflict, InvalidArgument, NotFound
from exocortex.core.ids import new_id
from exocortex.ingest.store import validation
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.repository import UniqueClash, transaction
from exocortex.ingest.update import entity_repository

ENTITY_TYPES = ("person", "project", "technology", "organization", "concept")
MAX_NAME = 200
MAX_ALIASES = 50


@dataclass
class EntityChanges:
    name: str | None = None
    type: str | None = None
    aliases: list[str] | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None


def check_name(name: str) -> str:
    value = validation.required_text(name, "name")
    if not value:
        raise InvalidArgument("name must not be empty", field="name")
    if len(value) > MAX_NAME:
        raise InvalidArgument(f"name is at most {MAX_NAME} characters", field="name")
    return value


def check_aliases(aliases: list[str]) -> list[str]:
    if len(aliases) > MAX_ALIASES:
        raise InvalidArgument(f"at most {MAX_ALIASES} aliases", field="aliases")
    seen: dict[str, None] = {}
    for i, alias in enumerate(aliases):
        value = strip_private_field(alias)
        if not value and alias.strip():
            continue  # wholly private: dropped, as a wholly private tag is
        if not value or len(value) > MAX_NAME:
            raise InvalidArgument(
                f"an alias is 1-{MAX_NAME} characters, not blank", field=f"aliases.{i}"
            )
        seen.setdefault(value, None)
    return list(seen)


def _tags(tags: list[str]) -> list[str]:
    validation.check_tags(tags)
    return normalize_tags(tags)


class EntityService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def create(
        self,
        *,
        namespace: str,
        name: str,
        type: str | None,
        aliases: list[str],
        tags: list[str],
        metadata: dict[str, Any],
    ) -> Row:
        namespace = validation.check_namespace(namespace)
        name = check_name(name)
        kind = validation.check_choice(type or "concept", ENTITY_TYPES, "type")
        alias_list = check_aliases(aliases)
        tag_list = _tags(tags)
        entity_id = new_id()
        try:
            async with transaction(self._pool) as conn:
                await entity_repository.insert(
                    conn,
                    entity_id,
                    namespace=namespace,
                    name=name,
                    kind=kind,
                    aliases=alias_list,
                    metadata=metadata,
                )
                await entity_repository.replace_tags(conn, entity_id, tag_list)
        except UniqueClash as exc:
            raise Conflict(
                f"an entity named {name!r} already exists in namespace {namespace}", field="name"
            ) from exc
        return await self.get(entity_id)

    async def update(self, entity_id: str, changes: EntityChanges) -> Row:
        name = check_name(changes.name) if changes.name is not None else None
        kind = (
            validation.check_choice(changes.type, ENTITY_TYPES, "type")
            if changes.type is not None
            else None
        )
        aliases = check_aliases(changes.aliases) if changes.aliases is not None else None
        tag_list = _tags(changes.tags) if changes.tags is not None else None
        try:
            async with transaction(self._pool) as conn:
                found = await entity_repository.update(
                    conn,
                    entity_id,
                    name=name,
                    kind=kind,
                    aliases=aliases,
                    metadata=changes.metadata,
                )
                if not found:
                    raise NotFound(f"entity {entity_id} not found", field="id")
                if tag_list is not None:
                    await entity_repository.replace_tags(conn, entity_id, tag_list)
        except UniqueClash as exc:
            raise Conflict(
                f"another entity in this namespace is already named {changes.name!r}",
                field="name",
            ) from exc
        return await self.get(entity_id)

    async def delete(self, entity_id: str) -> None:
        async with self._pool.connection() as conn:
            deleted = await entity_repository.delete(conn, entity_id)
        if not deleted:
            raise NotFound(f"entity {entity_id} not found", field="id")

    async def get(self, entity_id: str) -> Row:
        async with self._pool.connection() as conn:
            # An entity outside the caller's namespace scope reads as missing.
            row = await entity_repository.get(conn, entity_id)
        if row is None:
            raise NotFound(f"entity {entity_id} not found", field="id")
        return row
