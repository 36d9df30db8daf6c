"""The in-process LRU cache: bounded by entries, and with a weigher also by summed weight (the
token and vector caches of search are byte budgets). Pure unit test."""

from __future__ import annotations

from exocortex.retrieval.search.lru import LruCache


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (1, 3)


def test_a_weight_budget_evicts_until_the_values_fit() -> None:
    cache: LruCache[str, bytes] = LruCache(100, max_weight=10, weigh=len)
    cache.put("a", b"1234")
    cache.put("b", b"1234")
    assert cache.weight == 8
    cache.put("c", b"1234")  # 12 > 10: "a" goes
    assert cache.get("a") is None
    assert cache.weight == 8
    cache.put("b", b"12")  # replacing a value counts its new weight only
    assert cache.weight == 6
    assert len(cache) == 2


def test_a_value_heavier_than_the_budget_is_not_kept() -> None:
    cache: LruCache[str, bytes] = LruCache(100, max_weight=3, weigh=len)
    cache.put("a", b"12")
    cache.put("big", b"123456")
    assert len(cache) == 0
    assert cache.weight == 0


def test_a_zero_budget_keeps_nothing() -> None:
    cache: LruCache[str, bytes] = LruCache(100, max_weight=0, weigh=len)
    cache.put("a", b"1")
    assert cache.get("a") is None
