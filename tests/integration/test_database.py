"""Postgres schema, outbox and settings against a real server; embedded servers' lifecycles."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nats
import psycopg
import pytest
from alembic.script import ScriptDirectory
from psycopg import errors

from exocortex.core.db import migrate
from exocortex.core.db.outbox import backlog, claim_unpublished, enqueue
from exocortex.core.db.pool import Pool, open_pool
from exocortex.core.db.settings_store import DEFAULT_SETTINGS, load_settings, upsert_settings
from exocortex.core.runtime.nats import EmbeddedNats
from exocortex.core.runtime.postgres import EmbeddedPostgres

pytestmark = pytest.mark.integration

TABLES = {
    "memories", "memory_tags", "entities", "entity_tags", "entity_relationships",
    "memory_entities", "memory_links", "goals", "goal_milestones", "goal_links", "access_log",
    "search_impressions", "memory_usage", "co_retrievals", "search_misses", "consolidations",
    "contradictions", "settings", "retrieval_regression_baselines", "retrieval_regression_runs",
    "observability_counters", "job_runs", "outbox", "pending_fetches", "memory_audit",
    "importance_marks", "memory_tokens",
}  # fmt: skip


def _head() -> str:
    """The one head revision (two heads would mean a migration was added beside another)."""
    heads = ScriptDirectory.from_config(migrate.alembic_config("postgresql://x@localhost/x"))
    assert len(heads.get_heads()) == 1, heads.get_heads()
    return str(heads.get_current_head())


def _tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {r[0] for r in rows} - {"alembic_version"}


def _insert_memory(conn: psycopg.Connection[tuple[object, ...]], mid: str, **cols: object) -> None:
    values = {"id": mid, "content": f"content of {mid}", **cols}
    names = ", ".join(values)
    marks = ", ".join(["%s"] * len(values))
    conn.execute(f"INSERT INTO memories ({names}) VALUES ({marks})", list(values.values()))


def test_migrations_upgrade_downgrade_upgrade(database_url: str) -> None:
    assert migrate.current(database_url) == _head()
    assert _tables(database_url) == TABLES

    migrate.downgrade(database_url, "base")
    assert migrate.current(database_url) is None
    assert _tables(database_url) == set()

    migrate.upgrade(database_url)
    assert migrate.current(database_url) == _head()
    assert _tables(database_url) == TABLES


def _scoring_settings(conn: psycopg.Connection[tuple[object, ...]]) -> dict[str, str]:
    rows = conn.execute("SELECT key, value FROM settings WHERE key LIKE 'scoring.%'")
    return {str(key): str(value) for key, value in rows}


def test_fusion_defaults_move_only_rows_still_at_the_old_default(database_url: str) -> None:
    migrate.downgrade(database_url, "0001")
    with psycopg.connect(database_url, autocommit=True) as conn:
        # A database seeded before 0002, where the operator already tuned one weight.
        conn.execute("UPDATE settings SET value = '0.30' WHERE key = 'scoring.vector_weight'")
        old = _scoring_settings(conn)
        assert (old["scoring.rrf_k"], old["scoring.fts_weight"]) == ("15", "0.60")

    migrate.upgrade(database_url)

    with psycopg.connect(database_url) as conn:
        new = _scoring_settings(conn)
    assert new["scoring.rrf_k"] == "5"
    assert new["scoring.fts_weight"] == "0.50"
    assert new["scoring.graph_weight"] == "0.05"
    assert new["scoring.vector_weight"] == "0.30"


def test_neighbour_weight_moves_only_from_the_old_default(database_url: str) -> None:
    def weight_and_coherence(conn: psycopg.Connection[Any]) -> tuple[str | None, ...]:
        rows = dict(
            conn.execute(
                "SELECT key, value FROM settings WHERE key IN "
                "('scoring.neighbour_weight', 'search.neighbour_coherence_full')"
            ).fetchall()
        )
        return rows.get("scoring.neighbour_weight"), rows.get("search.neighbour_coherence_full")

    for before, after in (("0.3", "0.5"), ("0.4", "0.4")):
        migrate.downgrade(database_url, "0009")
        with psycopg.connect(database_url, autocommit=True) as conn:
            assert weight_and_coherence(conn)[1] is None
            conn.execute(
                "UPDATE settings SET value = %s WHERE key = 'scoring.neighbour_weight'", (before,)
            )
        migrate.upgrade(database_url)
        with psycopg.connect(database_url) as conn:
            assert weight_and_coherence(conn) == (after, "0.02")


def test_enrichment_settings_are_seeded_without_overwriting(database_url: str) -> None:
    migrate.downgrade(database_url, "0002")
    with psycopg.connect(database_url, autocommit=True) as conn:
        gone = conn.execute("SELECT count(*) FROM settings WHERE key LIKE 'enrichment.%'")
        assert gone.fetchone() == (0,)
        # Set by hand before the migration that introduces the key.
        conn.execute(
            "INSERT INTO settings (key, value) VALUES ('enrichment.goal_threshold', '0.6')"
        )

    migrate.upgrade(database_url)

    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute("SELECT key, value FROM settings WHERE key LIKE 'enrichment.%'")
        seeded = {str(k): str(v) for k, v in rows}
        conn.execute("UPDATE settings SET value = '0.55' WHERE key = 'enrichment.goal_threshold'")
    assert seeded["enrichment.goal_threshold"] == "0.6"
    assert seeded["enrichment.relation_threshold"] == "0.75"
    assert set(seeded) == {k for k in DEFAULT_SETTINGS if k.startswith("enrichment.")}


def test_access_counts_move_to_memory_usage_and_back(database_url: str) -> None:
    migrate.downgrade(database_url, "0005")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM memories")
        _insert_memory(conn, "used", access_count=7, last_accessed_at="2026-11-01T10:00:00Z")
        _insert_memory(conn, "never")
    migrate.upgrade(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT memory_id, access_count, last_accessed_at::text FROM memory_usage"
        ).fetchall()
        assert rows == [("used", 7, "2026-11-01 10:00:00+00")]
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'memories'"
        ).fetchall()
        assert not {"access_count", "last_accessed_at"} & {c[0] for c in columns}
        conn.execute("UPDATE memory_usage SET access_count = 9")
    migrate.downgrade(database_url, "0005")
    with psycopg.connect(database_url, autocommit=True) as conn:
        back = conn.execute("SELECT id, access_count FROM memories ORDER BY id").fetchall()
        assert back == [("never", 0), ("used", 9)]
        conn.execute("DELETE FROM memories")
    migrate.upgrade(database_url)


def test_the_live_memory_count_can_use_its_partial_index(database_url: str) -> None:
    from exocortex.retrieval.projection.repository import LIVE_MEMORIES_SQL

    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(str(r[0]) for r in conn.execute(f"EXPLAIN {LIVE_MEMORIES_SQL}"))
    assert "ix_memories_active_expires_at" in plan, plan


def test_cli_reports_current_revision(
    database_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert migrate.main(["--dsn", database_url, "current"]) == 0
    assert capsys.readouterr().out.strip() == _head()


def test_dedup_index_allows_one_active_root_per_hash(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        _insert_memory(conn, "A", content_hash="h1")
        with pytest.raises(errors.UniqueViolation):
            _insert_memory(conn, "B", content_hash="h1")
        # Same hash is fine in another namespace or content type ...
        _insert_memory(conn, "C", content_hash="h1", namespace="other")
        _insert_memory(conn, "D", content_hash="h1", content_type="note")
        # ... when the duplicate is archived ...
        _insert_memory(conn, "E", content_hash="h1", is_active=False)
        # ... or a chunk of a root.
        _insert_memory(conn, "F", content_hash="h1", parent_id="A", chunk_index=0)
        # Archiving the original frees the slot for a new active root.
        conn.execute("UPDATE memories SET is_active = false WHERE id = 'A'")
        _insert_memory(conn, "G", content_hash="h1")


def test_memory_constraints_and_cascades(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        with pytest.raises(errors.CheckViolation):
            _insert_memory(conn, "X", importance=1.5)
        with pytest.raises(errors.CheckViolation):
            _insert_memory(conn, "X", enrichment_status="weird")
        _insert_memory(conn, "root")
        _insert_memory(conn, "chunk", parent_id="root", chunk_index=0)
        _insert_memory(conn, "summary")
        _insert_memory(conn, "source", consolidated_into="summary", superseded_by="summary")
        conn.execute("INSERT INTO memory_tags VALUES ('root', 'x')")
        row = conn.execute(
            "SELECT version, metadata, keywords, namespace FROM memories WHERE id = 'root'"
        ).fetchone()
        assert row is not None
        assert row == (1, {}, "", "default")
        # Deleting a root removes its chunks and tags; deleting a summary only clears lineage.
        conn.execute("DELETE FROM memories WHERE id IN ('root', 'summary')")
        ids = {r[0] for r in conn.execute("SELECT id FROM memories")}
        assert ids == {"source"}
        lineage = conn.execute(
            "SELECT consolidated_into, superseded_by FROM memories WHERE id = 'source'"
        ).fetchone()
        assert lineage == (None, None)
        assert conn.execute("SELECT count(*) FROM memory_tags").fetchone() == (0,)


def test_usage_records_go_with_their_memory_without_locking_it(database_url: str) -> None:
    """Usage records are written without a key check on `memories` (which would lock the
    memory's row); deleting a memory, or the root a chunk belongs to, still removes them."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        _insert_memory(conn, "used")
        _insert_memory(conn, "chunked")
        _insert_memory(conn, "part", parent_id="chunked", chunk_index=0)
        _insert_memory(conn, "kept")
        for mid in ("used", "part", "kept"):
            conn.execute("INSERT INTO access_log (memory_id, kind) VALUES (%s, 'search')", [mid])
            conn.execute("INSERT INTO memory_usage (memory_id, access_count) VALUES (%s, 1)", [mid])
            conn.execute(
                "INSERT INTO search_impressions (memory_id, served_at) VALUES (%s, now())", [mid]
            )
            conn.execute(
                "INSERT INTO pending_fetches (memory_id, fetched_at) VALUES (%s, now())", [mid]
            )
        keys = conn.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text"
            " IN ('access_log', 'memory_usage', 'search_impressions', 'pending_fetches')"
        ).fetchone()
        assert keys == (0,)
        locked = conn.execute(
            "SELECT count(*) FROM memories WHERE xmax <> 0 AND id IN ('used', 'part', 'kept')"
        ).fetchone()
        assert locked == (0,)

        conn.execute("DELETE FROM memories WHERE id IN ('used', 'chunked')")
        for table in ("access_log", "memory_usage", "search_impressions", "pending_fetches"):
            rows = conn.execute(f"SELECT memory_id FROM {table}").fetchall()
            assert rows == [("kept",)], table
        conn.execute("DELETE FROM memories")


def test_contradiction_pairs_fold_to_one_row_keeping_the_one_acted_on(
    database_url: str,
) -> None:
    """Before 0015 a pair could be recorded twice (once each way, or twice by a race); the
    upgrade keeps the row a person resolved or dismissed, then the oldest, and from then on
    the pair is unique whatever its order."""
    migrate.downgrade(database_url, "0014")
    with psycopg.connect(database_url, autocommit=True) as conn:
        for mid in ("A", "B", "C", "D"):
            _insert_memory(conn, mid)
        conn.execute(
            "INSERT INTO contradictions (id, memory_a_id, memory_b_id, description, status, "
            "created_at) VALUES "
            "('ab-old', 'A', 'B', 'x', 'pending', now() - interval '2 days'), "
            "('ba-done', 'B', 'A', 'x', 'resolved', now() - interval '1 day'), "
            "('cd-old', 'C', 'D', 'x', 'pending', now() - interval '2 days'), "
            "('dc-new', 'D', 'C', 'x', 'pending', now())"
        )
    migrate.upgrade(database_url)
    with psycopg.connect(database_url, autocommit=True) as conn:
        kept = [r[0] for r in conn.execute("SELECT id FROM contradictions ORDER BY id")]
        assert kept == ["ba-done", "cd-old"]
        with pytest.raises(errors.UniqueViolation):
            conn.execute(
                "INSERT INTO contradictions (id, memory_a_id, memory_b_id, description) "
                "VALUES ('again', 'A', 'B', 'x')"
            )


def test_entity_names_are_unique_case_insensitively(database_url: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO entities (id, name, type) VALUES ('e1', 'Postgres', 'technology')"
        )
        with pytest.raises(errors.UniqueViolation):
            conn.execute("INSERT INTO entities (id, name) VALUES ('e2', 'POSTGRES')")
        conn.execute("INSERT INTO entities (id, name, namespace) VALUES ('e3', 'postgres', 'ns2')")
        with pytest.raises(errors.CheckViolation):
            conn.execute("INSERT INTO entities (id, name, type) VALUES ('e4', 'x', 'animal')")


async def test_settings_are_seeded_and_upserted(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        settings = await load_settings(conn)
        assert settings == DEFAULT_SETTINGS
        assert settings["dedup.similarity_threshold"] == "0.85"
        await upsert_settings(conn, {"dedup.similarity_threshold": "0.9", "new.key": "x"})
        await conn.commit()
        settings = await load_settings(conn)
        assert settings["dedup.similarity_threshold"] == "0.9"
        assert settings["new.key"] == "x"


async def test_outbox_enqueue_claim_backlog(database_url: str) -> None:
    pool = await open_pool(database_url, max_size=3)
    try:
        async with pool.connection() as conn:
            await conn.execute("LISTEN exo_outbox")
            await conn.commit()
            async with pool.connection() as writer:
                first = await enqueue(writer, "exo.memory.created", b"\x01", {"x-cid": "c1"})
                second = await enqueue(writer, "exo.memory.updated", b"\x02")
            # pool.connection() commits on exit; the notification arrives after the commit.
            notifies = conn.notifies(timeout=5, stop_after=1)
            assert [n.channel async for n in notifies] == ["exo_outbox"]
            assert second > first
            assert await backlog(conn) == 2

        # Two relays: the second one skips rows the first one has locked.
        async with pool.connection() as relay_a, pool.connection() as relay_b:
            got_a = await claim_unpublished(relay_a, limit=1)
            got_b = await claim_unpublished(relay_b, limit=10)
            assert [r.id for r in got_a] == [first]
            assert [r.id for r in got_b] == [second]
            assert got_a[0].payload == b"\x01"
            assert got_a[0].headers == {"x-cid": "c1"}
            assert got_a[0].subject == "exo.memory.created"
            assert got_a[0].created_at.tzinfo is not None
            await relay_a.commit()  # relay A published its event
            await relay_b.rollback()  # relay B crashed before publishing: its claim is undone

        async with pool.connection() as conn:
            assert await backlog(conn) == 1
            again = await claim_unpublished(conn, limit=10)
            assert [r.id for r in again] == [second]
            await conn.commit()
            assert await backlog(conn) == 0
            assert await claim_unpublished(conn, limit=10) == []

        # A rolled-back transaction leaves no event behind.
        async with pool.connection() as conn:
            await enqueue(conn, "exo.memory.created", b"x")
            await conn.rollback()
            assert await backlog(conn) == 0
    finally:
        await pool.close()


async def test_pool_yields_dict_rows(db_pool: Pool) -> None:
    async with db_pool.connection() as conn:
        cur = await conn.execute("SELECT value FROM settings WHERE key = 'scoring.rrf_k'")
        assert await cur.fetchone() == {"value": "5"}


def test_embedded_postgres_restart_keeps_data(tmp_path: Path) -> None:
    data_dir = tmp_path / "pg"
    with EmbeddedPostgres(data_dir, fsync=False, database="keep") as pg:
        port = pg.port
        with psycopg.connect(pg.dsn, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (v text)")
            conn.execute("INSERT INTO t VALUES ('survives')")
    assert not pg.running
    with EmbeddedPostgres(data_dir, fsync=False, database="keep") as pg2:
        assert pg2.dsn.startswith(f"postgresql://postgres:{pg.password}@127.0.0.1:")
        with psycopg.connect(pg2.dsn) as conn:
            assert conn.execute("SELECT v FROM t").fetchall() == [("survives",)]
    # The same object can be restarted and keeps its port.
    pg.start()
    try:
        assert pg.port == port
    finally:
        pg.stop()


async def test_embedded_nats_jetstream_roundtrip(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await js.add_stream(name="EXO_TEST", subjects=["exo.test.>"])
        ack = await js.publish("exo.test.hello", b"payload", headers={"Nats-Msg-Id": "1"})
        dup = await js.publish("exo.test.hello", b"payload", headers={"Nats-Msg-Id": "1"})
        assert dup.duplicate
        assert dup.seq == ack.seq
        sub = await js.pull_subscribe("exo.test.>", durable="reader")
        msgs = await sub.fetch(1, timeout=5)
        assert [m.data for m in msgs] == [b"payload"]
        await msgs[0].ack()
    finally:
        await nc.close()


async def test_embedded_nats_keeps_streams_across_restart(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path / "js")
    with server:
        nc = await nats.connect(server.url)
        js = nc.jetstream()
        await js.add_stream(name="KEEP", subjects=["keep.>"])
        await js.publish("keep.one", b"1")
        await nc.close()
    assert not server.running
    with server:
        nc = await nats.connect(server.url)
        info = await nc.jetstream().stream_info("KEEP")
        assert info.state.messages == 1
        await nc.close()
    await asyncio.sleep(0)
