"""Settings writes and namespace lookups.

Settings are free-form text, but a value for a known setting must keep that setting's kind
(number, boolean or JSON), so a typo cannot silently break scoring or dedup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from exocortex.core.db.pool import Pool
from exocortex.core.db.settings_store import DEFAULT_SETTINGS, load_settings, upsert_settings
from exocortex.core.errors import InvalidArgument

_KEY = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,127}$")
MAX_VALUE_CHARS = 100_000
MAX_KEYS = 500
MAX_IDS = 1000


def _kind(default: str) -> str:
    if default in ("true", "false"):
        return "boolean"
    try:
        float(default)
        return "number"
    except ValueError:
        pass
    if default[:1] in ("[", "{"):
        return "json array" if default.startswith("[") else "json object"
    return "text"


def check_setting(key: str, value: str) -> None:
    if not _KEY.match(key):
        raise InvalidArgument(
            "a setting key is 1-128 letters, digits, '_', '.', ':' or '-'", field=key
        )
    if len(value) > MAX_VALUE_CHARS:
        raise InvalidArgument(f"{key} is longer than {MAX_VALUE_CHARS} characters", field=key)
    default = DEFAULT_SETTINGS.get(key)
    if default is None:
        return
    kind = _kind(default)
    if kind == "boolean" and value not in ("true", "false"):
        raise InvalidArgument(f"{key} must be 'true' or 'false'", field=key)
    if kind == "number":
        try:
            float(value)
        except ValueError:
            raise InvalidArgument(f"{key} must be a number", field=key) from None
    if kind.startswith("json"):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise InvalidArgument(f"{key} must be a {kind}", field=key) from None
        expected = list if kind == "json array" else dict
        if not isinstance(parsed, expected):
            raise InvalidArgument(f"{key} must be a {kind}", field=key)


class AdminService:
    def __init__(self, pool: Pool) -> None:
        self._pool = pool

    async def settings(self) -> dict[str, str]:
        async with self._pool.connection() as conn:
            return await load_settings(conn)

    async def update_settings(self, values: Mapping[str, str]) -> dict[str, str]:
        if len(values) > MAX_KEYS:
            raise InvalidArgument(f"at most {MAX_KEYS} settings per update")
        for key, value in values.items():
            check_setting(key, value)
        async with self._pool.connection() as conn:
            async with conn.transaction():
                await upsert_settings(conn, dict(values))
            return await load_settings(conn)

    async def namespaces(
        self, memory_ids: list[str], goal_ids: list[str], entity_ids: list[str]
    ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        if max(len(memory_ids), len(goal_ids), len(entity_ids)) > MAX_IDS:
            raise InvalidArgument(f"at most {MAX_IDS} ids of each kind per lookup", field="ids")
        out: list[dict[str, str]] = []
        async with self._pool.connection() as conn:
            # Table names are constants, never input.
            for table, ids in (
                ("memories", memory_ids),
                ("goals", goal_ids),
                ("entities", entity_ids),
            ):
                if not ids:
                    out.append({})
                    continue
                cur = await conn.execute(
                    f"SELECT id, namespace FROM {table} WHERE id = ANY(%s)", (ids,)
                )
                out.append({r["id"]: r["namespace"] for r in await cur.fetchall()})
        return out[0], out[1], out[2]
