"""Graph proximity as search reads it from Postgres: links in either direction to a seed, shared
entities, and entities named by the query; checked against the rules computed by hand."""

from __future__ import annotations

import random
from typing import Any

import psycopg
from psycopg.rows import dict_row

from exocortex.retrieval.search import repository

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def _memories(conn: Conn, ids: list[str]) -> None:
    for mid in ids:
        await conn.execute(
            "INSERT INTO memories (id, content, namespace) VALUES (%s, %s, 'ns')",
            (mid, f"content of {mid}"),
        )


async def test_links_in_either_direction_entities_and_query_names(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    ) as conn:
        await _memories(conn, ["s1", "s2", "c1", "c2", "c3", "c4", "c5", "c6", "far"])
        await conn.execute(
            "INSERT INTO memory_links (source_id, target_id, strength) VALUES "
            "('s1', 'c1', 0.8), "  # seed → candidate
            "('c2', 's1', 0.2), "  # candidate → seed
            "('c2', 's2', 0.6), "  # the stronger of two links counts
            "('s1', 's2', 1.0), "  # a seed linked to a seed is scored too
            "('c3', 'far', 1.0), "  # linked, but not to a seed
            "('s2', 'far', 1.0)"  # linked to a seed, but not a candidate
        )
        await conn.execute(
            "INSERT INTO entities (id, name, namespace) VALUES "
            "('e1', 'Kafka', 'ns'), ('e2', 'Payment Queue', 'ns'), ('e3', 'Kafka', 'other')"
        )
        await conn.execute(
            "INSERT INTO memory_entities (memory_id, entity_id) VALUES "
            "('s2', 'e1'), ('c4', 'e1'), ('c5', 'e2'), ('c6', 'e3')"
        )
        candidates = ["s1", "s2", "c1", "c2", "c3", "c4", "c5", "c6"]
        got = await repository.proximity(
            conn, "ns", candidates, ["s1", "s2"], "why did the payment queue move"
        )
        assert got == {
            "c1": 0.3 + 0.5 * 0.8,
            "c2": 0.3 + 0.5 * 0.6,
            "s1": 0.3 + 0.5 * 1.0,
            "s2": 0.3 + 0.5 * 1.0,
            "c4": 0.5,  # shares Kafka with seed s2
            "c5": 1.0,  # mentions an entity the query names ("payment queue")
        }


async def test_proximity_matches_the_rule_on_random_graphs(database_url: str) -> None:
    """200 memories, random links both ways (self-links included): every candidate's score is
    the best 0.3 + 0.5·strength over its links to a seed, other than itself."""
    rng = random.Random(7)
    ids = [f"m{i:03d}" for i in range(200)]
    async with await psycopg.AsyncConnection.connect(
        database_url, autocommit=True, row_factory=dict_row
    ) as conn:
        await _memories(conn, ids)
        links = {(rng.choice(ids), rng.choice(ids)): round(rng.random(), 3) for _ in range(600)}
        for (source, target), strength in links.items():
            await conn.execute(
                "INSERT INTO memory_links (source_id, target_id, strength) VALUES (%s, %s, %s)",
                (source, target, strength),
            )
        for trial in range(5):
            candidates = rng.sample(ids, 120)
            seeds = candidates[:20]
            expected: dict[str, float] = {}
            for (source, target), strength in links.items():
                for candidate, other in ((source, target), (target, source)):
                    if candidate in candidates and other in seeds and candidate != other:
                        score = 0.3 + 0.5 * strength
                        expected[candidate] = max(expected.get(candidate, 0.0), score)
            got = await repository.proximity(conn, "ns", candidates, seeds, "nothing named")
            assert got.keys() == expected.keys(), trial
            for key, value in expected.items():
                assert abs(got[key] - value) < 1e-9, (trial, key)
