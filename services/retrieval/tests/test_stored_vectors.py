"""The arrival neighbours' stored vectors are read once per version: a vector kept at the
version the neighbours statement saw is served without reading Postgres, a memory whose version
moved is read again, and what is read is kept under the version it was read at. Pure unit test
(the repository's read replaced by a counting stand-in over a dict of rows)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search import repository
from exocortex.retrieval.search.stored_vectors import StoredVectors


class _Rows:
    """Rows as id → (version, unit vector); counts the ids each read asks for."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[int, Vector]] = {}
        self.asked: list[list[str]] = []

    def store(self, memory_id: str, version: int, value: float) -> None:
        self.rows[memory_id] = (version, np.full(4, value, dtype=np.float32) / 2.0)

    async def read(self, conn: Any, ids: list[str]) -> dict[str, tuple[int, Vector]]:
        self.asked.append(sorted(ids))
        return {i: self.rows[i] for i in ids if i in self.rows}


@pytest.fixture
def rows(monkeypatch: pytest.MonkeyPatch) -> _Rows:
    table = _Rows()
    monkeypatch.setattr(repository, "versioned_vectors", table.read)
    return table


CONN = cast(repository.Conn, object())


async def test_kept_vectors_are_not_read_again(rows: _Rows) -> None:
    rows.store("a", 1, 1.0)
    rows.store("b", 3, 2.0)
    kept = StoredVectors()
    first = await kept.of(CONN, {"a": 1, "b": 3})
    second = await kept.of(CONN, {"a": 1, "b": 3})
    assert rows.asked == [["a", "b"]]
    assert first.keys() == second.keys() == {"a", "b"}
    for memory_id in ("a", "b"):
        assert np.array_equal(first[memory_id], rows.rows[memory_id][1])
        assert np.array_equal(second[memory_id], rows.rows[memory_id][1])


async def test_a_new_version_is_read_again(rows: _Rows) -> None:
    rows.store("a", 1, 1.0)
    rows.store("b", 1, 2.0)
    kept = StoredVectors()
    await kept.of(CONN, {"a": 1, "b": 1})
    rows.store("b", 2, 5.0)  # updated: a new vector and a new version
    got = await kept.of(CONN, {"a": 1, "b": 2})
    assert rows.asked == [["a", "b"], ["b"]]
    assert np.array_equal(got["b"], rows.rows["b"][1])


async def test_a_vector_is_kept_under_the_version_it_was_read_at(rows: _Rows) -> None:
    # Updated between the neighbours statement (version 1) and the read (version 2): the
    # current row is served, and kept as version 2's, never as version 1's.
    rows.store("a", 2, 3.0)
    kept = StoredVectors()
    got = await kept.of(CONN, {"a": 1})
    assert np.array_equal(got["a"], rows.rows["a"][1])
    await kept.of(CONN, {"a": 1})
    await kept.of(CONN, {"a": 2})
    assert rows.asked == [["a"], ["a"]]


async def test_a_memory_without_a_vector_is_left_out(rows: _Rows) -> None:
    rows.store("a", 1, 1.0)
    kept = StoredVectors()
    got = await kept.of(CONN, {"a": 1, "none": 4})
    assert got.keys() == {"a"}
    assert len(kept) == 1
