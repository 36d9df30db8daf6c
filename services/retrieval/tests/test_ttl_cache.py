"""The TTL cache serves fresh values and, through peek, the last value after it expired."""

from __future__ import annotations

import pytest

from exocortex.retrieval.search import lru
from exocortex.retrieval.search.lru import TtlCache


def test_expired_values_are_gone_for_get_but_peek_keeps_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = [100.0]
    monkeypatch.setattr(lru.time, "monotonic", lambda: now[0])
    cache: TtlCache[str, int] = TtlCache(ttl_seconds=60.0)
    assert cache.peek("ns") is None
    cache.put("ns", 7)
    assert cache.get("ns") == 7
    assert cache.peek("ns") == (7, True)
    now[0] += 61.0
    assert cache.get("ns") is None
    assert cache.peek("ns") == (7, False)
    cache.put("ns", 9)
    assert cache.peek("ns") == (9, True)
