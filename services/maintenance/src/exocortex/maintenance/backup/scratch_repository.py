"""The SQL of a deep verify: create, migrate and drop the scratch database, and read the keys
of the rows a restore put in it."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import LiteralString
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

from exocortex.core.db import migrate
from exocortex.core.logging import get_logger

log = get_logger(__name__)

SCRATCH_PREFIX = "exo_verify_"

# How each section's rows are keyed in the database, the same keys a restore reports.
KEY_SQL: dict[str, LiteralString] = {
    "memories": "SELECT id AS key FROM memories",
    "memory_links": "SELECT source_id || '→' || target_id AS key FROM memory_links",
    "entities": "SELECT id AS key FROM entities",
    "memory_entities": "SELECT memory_id || '→' || entity_id AS key FROM memory_entities",
    "entity_relationships": "SELECT id AS key FROM entity_relationships",
    "goals": "SELECT id AS key FROM goals",
    "goal_milestones": "SELECT id AS key FROM goal_milestones",
    "goal_links": "SELECT goal_id || '→' || memory_id AS key FROM goal_links",
    "contradictions": "SELECT id AS key FROM contradictions",
    "consolidations": "SELECT id AS key FROM consolidations",
}


class ScratchUnavailable(Exception):
    """The scratch database cannot be made (the role lacks CREATEDB, or migrating it failed)."""


def scratch_dsn(dsn: str, database: str) -> str:
    """The same server and role, another database."""
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + database))


@asynccontextmanager
async def scratch_database(dsn: str) -> AsyncIterator[str]:
    """Creates and migrates ``exo_verify_<random>``, yields its DSN, and always drops it."""
    name = SCRATCH_PREFIX + secrets.token_hex(6)
    try:
        admin = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    except psycopg.Error as err:
        raise ScratchUnavailable(f"cannot connect to Postgres: {err}") from err
    try:
        try:
            await admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.errors.InsufficientPrivilege as err:
            raise ScratchUnavailable(
                "the database role may not create databases: deep verify needs a scratch "
                "database (ALTER ROLE <role> CREATEDB), or use the fast verify"
            ) from err
        log.info("scratch database created", database=name)
        try:
            url = scratch_dsn(dsn, name)
            try:
                await asyncio.to_thread(migrate.upgrade, url)
            except Exception as err:
                raise ScratchUnavailable(f"migrating the scratch database failed: {err}") from err
            yield url
        finally:
            # FORCE ends any connection a failed step left open; the drop must not be skipped.
            await admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            log.info("scratch database dropped", database=name)
    finally:
        await admin.close()


async def restored_keys(url: str, sections: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    async with await psycopg.AsyncConnection.connect(url) as conn:
        for section in sections:
            cur = await conn.execute(KEY_SQL[section])
            out[section] = [str(row[0]) for row in await cur.fetchall()]
    return out
