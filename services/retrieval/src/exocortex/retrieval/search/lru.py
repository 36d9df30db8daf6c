"""Two tiny in-process caches (bounded LRU and TTL), enough for query vectors and aggregates."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    def __init__(self, max_entries: int) -> None:
        self._max = max(1, max_entries)
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._max:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class TtlCache(Generic[K, V]):
    def __init__(self, ttl_seconds: float, max_entries: int = 1024) -> None:
        self._ttl = ttl_seconds
        self._items: LruCache[K, tuple[float, V]] = LruCache(max_entries)

    def get(self, key: K) -> V | None:
        hit = self._items.get(key)
        if hit is None or time.monotonic() - hit[0] > self._ttl:
            return None
        return hit[1]

    def put(self, key: K, value: V) -> None:
        self._items.put(key, (time.monotonic(), value))

    def peek(self, key: K) -> tuple[V, bool] | None:
        """The last value put, expired or not, and whether it is still fresh."""
        hit = self._items.get(key)
        if hit is None:
            return None
        return hit[1], time.monotonic() - hit[0] <= self._ttl
