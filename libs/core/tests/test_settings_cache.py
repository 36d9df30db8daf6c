"""The settings cache (pure: the table read is replaced): a change announced while a read is
under way is not hidden by that read, and a change made here is announced."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from exocortex.core import settings_cache
from exocortex.core.settings_cache import SettingsCache


class _Pool:
    @asynccontextmanager
    async def connection(self) -> AsyncIterator[None]:
        yield None


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The table's values, each read counted; ``during_read`` runs inside a read."""
    state: dict[str, Any] = {"values": {"k": "old"}, "reads": 0, "during_read": None}

    async def load(_conn: object) -> dict[str, str]:
        state["reads"] += 1
        values = dict(state["values"])  # what the read saw before anything below
        if state["during_read"] is not None:
            state.pop("during_read")()
            state["during_read"] = None
        return values

    monkeypatch.setattr(settings_cache, "load_settings", load)
    return state


async def test_values_are_cached_until_invalidated(table: dict[str, Any]) -> None:
    cache = SettingsCache(_Pool(), ttl_seconds=3600)  # type: ignore[arg-type]
    assert await cache.get() == {"k": "old"}
    table["values"] = {"k": "new"}
    assert await cache.get() == {"k": "old"}
    assert table["reads"] == 1
    cache.invalidate()
    assert await cache.get() == {"k": "new"}


async def test_a_change_announced_during_a_read_is_read_again(table: dict[str, Any]) -> None:
    cache = SettingsCache(_Pool(), ttl_seconds=3600)  # type: ignore[arg-type]

    def changed_meanwhile() -> None:
        table["values"] = {"k": "new"}
        cache.invalidate()

    table["during_read"] = changed_meanwhile
    assert await cache.get() == {"k": "old"}  # the read began before the change
    assert await cache.get() == {"k": "new"}  # ... so it was not kept as fresh
    assert table["reads"] == 2


async def test_a_change_made_here_is_announced(table: dict[str, Any]) -> None:
    cache = SettingsCache(_Pool(), ttl_seconds=3600)  # type: ignore[arg-type]
    announced: list[bool] = []

    async def announce() -> None:
        announced.append(True)

    await cache.get()
    await cache.changed()  # before ``follow``: nothing to tell, read again here all the same
    assert announced == []
    cache.announce_with(announce)
    table["values"] = {"k": "new"}
    await cache.changed()
    assert announced == [True]
    assert await cache.get() == {"k": "new"}
