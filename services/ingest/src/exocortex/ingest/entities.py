"""Manual entity edits: create, rename, retype, aliases, tags, metadata, delete.

Names are unique per namespace, case-insensitively (the schema enforces it); a clash is a
conflict, not a silent merge.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import psycopg

from exocortex.core import scope
from exocortex.core.db.pool import Pool
from exocortex.core.domain.tags import normalize_tags
from exocortex.core.domain.text import strip_private_field
from exocortex.core.errors import Conflict, InvalidArgument, NotFound
from exocortex.core.ids import new_id
from exocortex.ingest import validation

Row = dict[str, Any]

ENTITY_TYPES = ("person", "project", "technology", "organization", "concept")
MAX_NAME = 200
MAX_ALIASES = 50

_SELECT = (
    "SELECT e.id, e.namespace, e.name, e.type, e.aliases, e.metadata, e.created_at, "
    "e.updated_at, coalesce(array(SELECT t.tag FROM entity_tags t WHERE t.entity_id = e.id "
    "ORDER BY t.tag), '{}'::text[]) AS tags FROM entities e"
)


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
            async with self._pool.connection() as conn, conn.transaction():
                await conn.execute(
                    "INSERT INTO entities (id, namespace, name, type, aliases, metadata) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    (
                        entity_id,
                        namespace,
                        name,
                        kind,
                        json.dumps(alias_list),
                        json.dumps(metadata),
                    ),
                )
                await self._replace_tags(conn, entity_id, tag_list)
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(
                f"an entity named {name!r} already exists in namespace {namespace}", field="name"
            ) from exc
        return await self.get(entity_id)

    async def update(self, entity_id: str, changes: EntityChanges) -> Row:
        sets: list[str] = []
        params: list[Any] = []
        if changes.name is not None:
            sets.append("name = %s")
            params.append(check_name(changes.name))
        if changes.type is not None:
            sets.append("type = %s")
            params.append(validation.check_choice(changes.type, ENTITY_TYPES, "type"))
        if changes.aliases is not None:
            sets.append("aliases = %s")
            params.append(json.dumps(check_aliases(changes.aliases)))
        if changes.metadata is not None:
            sets.append("metadata = %s")
            params.append(json.dumps(changes.metadata))
        tag_list = _tags(changes.tags) if changes.tags is not None else None
        sets.append("updated_at = now()")
        try:
            async with self._pool.connection() as conn, conn.transaction():
                cond, scoped = scope.sql_filter("entities")
                cur = await conn.execute(
                    f"UPDATE entities SET {', '.join(sets)} WHERE id = %s AND {cond}",
                    (*params, entity_id, *scoped),
                )
                if cur.rowcount == 0:
                    raise NotFound(f"entity {entity_id} not found", field="id")
                if tag_list is not None:
                    await self._replace_tags(conn, entity_id, tag_list)
        except psycopg.errors.UniqueViolation as exc:
            raise Conflict(
                f"another entity in this namespace is already named {changes.name!r}",
                field="name",
            ) from exc
        return await self.get(entity_id)

    async def delete(self, entity_id: str) -> None:
        async with self._pool.connection() as conn:
            cond, scoped = scope.sql_filter("entities")
            cur = await conn.execute(
                f"DELETE FROM entities WHERE id = %s AND {cond}", (entity_id, *scoped)
            )
        if cur.rowcount == 0:
            raise NotFound(f"entity {entity_id} not found", field="id")

    async def get(self, entity_id: str) -> Row:
        async with self._pool.connection() as conn:
            # An entity outside the caller's namespace scope reads as missing.
            cond, scoped = scope.sql_filter("e")
            cur = await conn.execute(f"{_SELECT} WHERE e.id = %s AND {cond}", (entity_id, *scoped))
            row = await cur.fetchone()
        if row is None:
            raise NotFound(f"entity {entity_id} not found", field="id")
        return row

    @staticmethod
    async def _replace_tags(conn: Any, entity_id: str, tags: list[str]) -> None:
        await conn.execute("DELETE FROM entity_tags WHERE entity_id = %s", (entity_id,))
        if tags:
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO entity_tags (entity_id, tag) VALUES (%s, %s)",
                    [(entity_id, tag) for tag in tags],
                )
