"""Settings writes and namespace lookups.

Every value is checked against the typed schema of all settings (``setting_schema``) before it
is written, here as well as in the gateway: this service is the only writer, and a gRPC caller
need not be the gateway. One bad value would otherwise break every later read of it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from exocortex.core.db.pool import Pool
from exocortex.core.db.settings_store import load_settings, upsert_settings
from exocortex.core.domain import setting_schema
from exocortex.core.errors import InvalidArgument
from exocortex.ingest.update import repository

MAX_KEYS = 500
MAX_IDS = 1000


def check_setting(key: str, value: str) -> None:
    try:
        setting_schema.check(key, value)
    except setting_schema.SettingError as exc:
        raise InvalidArgument(str(exc), field=exc.key.replace("\x00", "\\u0000")) from None


class AdminService:
    def __init__(self, pool: Pool, on_change: Callable[[], Awaitable[None]] | None = None) -> None:
        self._pool = pool
        # Told after an update is committed: the write path in this process applies new
        # settings from the next store on, and the other processes are told to (settings_cache).
        self._on_change = on_change

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
            if self._on_change is not None:
                await self._on_change()
            return await load_settings(conn)

    async def namespaces(
        self, memory_ids: list[str], goal_ids: list[str], entity_ids: list[str]
    ) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        if max(len(memory_ids), len(goal_ids), len(entity_ids)) > MAX_IDS:
            raise InvalidArgument(f"at most {MAX_IDS} ids of each kind per lookup", field="ids")
        out: list[dict[str, str]] = []
        async with self._pool.connection() as conn:
            for table, ids in (
                ("memories", memory_ids),
                ("goals", goal_ids),
                ("entities", entity_ids),
            ):
                out.append(await repository.namespaces_by_id(conn, table, ids) if ids else {})
        return out[0], out[1], out[2]
