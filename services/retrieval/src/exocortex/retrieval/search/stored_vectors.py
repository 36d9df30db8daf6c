"""The stored vectors of arrival neighbours and their seeds, kept in this process by id and
version.

The neighbours' coherence compares a seed's stored vector with those of the memories stored
beside it, about a hundred vectors a search. Read from Postgres each time they were the largest
rows a search reads (1.5 KB each), and the same memories come back search after search. Every
write that changes a memory's vector bumps its version (an update, a merge, a re-embedding), and
the neighbours statement reads each one's version, so a vector kept by (id, version) is the
stored one; only the vectors not kept are read, each kept under the version it was read at.
"""

from __future__ import annotations

from collections.abc import Mapping

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search import repository
from exocortex.retrieval.search.lru import LruCache

# 1.5 KB a vector at 384 dimensions: 48 MB keep about 32,000 (see EXO_RETRIEVAL_VECTOR_CACHE_MB).
DEFAULT_BYTES = 48 * 2**20
# A bound on the entries, whatever the vectors' size, so the bookkeeping stays small.
MAX_ENTRIES = 65_536


class StoredVectors:
    def __init__(self, max_bytes: int = DEFAULT_BYTES) -> None:
        self._kept: LruCache[tuple[str, int], Vector] = LruCache(
            MAX_ENTRIES, max_weight=max_bytes, weigh=_vector_bytes
        )

    async def of(self, conn: repository.Conn, versions: Mapping[str, int]) -> dict[str, Vector]:
        """The unit vector of each memory of ``versions`` (id → the version read) that has
        one; those not kept at that version are read on ``conn``."""
        out: dict[str, Vector] = {}
        missing: list[str] = []
        for memory_id, version in versions.items():
            vector = self._kept.get((memory_id, version))
            if vector is None:
                missing.append(memory_id)
            else:
                out[memory_id] = vector
        if missing:
            read = await repository.versioned_vectors(conn, missing)
            for memory_id, (version, vector) in read.items():
                self._kept.put((memory_id, version), vector)
                out[memory_id] = vector
        return out

    def __len__(self) -> int:
        return len(self._kept)


def _vector_bytes(vector: Vector) -> int:
    return int(vector.nbytes)
