"""Migrations 0020 and 0021 on a real Postgres: the token vectors' table and its trigger, and
re-scoring switched on for a store still at the old default only."""

from __future__ import annotations

import psycopg
import pytest

from exocortex.core.db import migrate

pytestmark = pytest.mark.integration

KEY = "search.rerank_candidates"


def _value(database_url: str) -> str:
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT value FROM settings WHERE key = %s", (KEY,)).fetchone()
    assert row is not None
    return str(row[0])


def test_a_store_at_the_old_default_moves_to_20_and_back(database_url: str) -> None:
    assert _value(database_url) == "20"
    migrate.downgrade(database_url, "0020")
    assert _value(database_url) == "0"
    migrate.upgrade(database_url)
    assert _value(database_url) == "20"


def test_a_value_someone_set_is_kept(database_url: str) -> None:
    migrate.downgrade(database_url, "0020")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("UPDATE settings SET value = '40' WHERE key = %s", (KEY,))
    migrate.upgrade(database_url)
    assert _value(database_url) == "40"


def test_the_token_table_goes_and_comes_back_with_its_trigger(database_url: str) -> None:
    migrate.downgrade(database_url, "0019")
    with psycopg.connect(database_url, autocommit=True) as conn:
        gone = conn.execute("SELECT to_regclass('memory_tokens')").fetchone()
    assert gone == (None,)
    migrate.upgrade(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO memories (id, content, embedding_model) VALUES ('m1', 'a text', 'x')"
        )
        conn.execute(
            "INSERT INTO memory_tokens (memory_id, model, dimensions, tokens) "
            "VALUES ('m1', 'x', 2, '\\x0102'::bytea)"
        )
        # A change that leaves text and model alone keeps them; a new text drops them.
        conn.execute("UPDATE memories SET importance = 0.9 WHERE id = 'm1'")
        kept = conn.execute("SELECT count(*) FROM memory_tokens").fetchone()
        conn.execute("UPDATE memories SET content = 'another text' WHERE id = 'm1'")
        dropped = conn.execute("SELECT count(*) FROM memory_tokens").fetchone()
    assert kept == (1,)
    assert dropped == (0,)
