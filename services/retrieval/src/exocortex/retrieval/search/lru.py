"""Two tiny in-process caches (bounded LRU and TTL), enough for query vectors and aggregates."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LruCache(Generic[K, V]):
    """At most ``max_entries`` values; with ``weigh``, also at most ``max_weight`` of their
    summed weights (e.g. bytes), the least recently used going first."""

    def __init__(
        self,
        max_entries: int,
        *,
        max_weight: int = 0,
        weigh: Callable[[V], int] | None = None,
    ) -> None:
        self._max = max(1, max_entries)
        self._items: OrderedDict[K, V] = OrderedDict()
        self._weigh = weigh
        self._max_weight = max_weight
        self._weight = 0

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        if self._weigh is not None:
            old = self._items.get(key)
            if old is not None:
                self._weight -= self._weigh(old)
            self._weight += self._weigh(value)
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._max or (
            self._weigh is not None and self._weight > self._max_weight and self._items
        ):
            _, dropped = self._items.popitem(last=False)
            if self._weigh is not None:
                self._weight -= self._weigh(dropped)

    @property
    def weight(self) -> int:
        """The summed weight of the values held (0 without ``weigh``)."""
        return self._weight

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
