"""Reading the reference product's database and exports, and their conversion to this project's
export document: read-only, independent of row order, every reference kept."""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest

from exocortex.core.reference import convert, ordering, sources
from exocortex.core.reference.settings import settings_of
from exocortex.core.reference.values import Report
from exocortex.testing import reference


@pytest.fixture
def built(tmp_path: Path) -> reference.Reference:
    return reference.build(tmp_path / "exocortex.db")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reading_the_database_leaves_the_file_and_its_folder_as_they_were(
    built: reference.Reference,
) -> None:
    before = _digest(built.path)
    listing = sorted(p.name for p in built.path.parent.iterdir())
    data = sources.read_path(built.path)
    assert len(data.rows("memories")) == built.counts["memories"]
    assert _digest(built.path) == before
    assert sorted(p.name for p in built.path.parent.iterdir()) == listing


def test_every_reference_resolves_in_the_document_order(built: reference.Reference) -> None:
    document = convert.to_export(sources.read_sqlite(built.path), namespace="ns").document
    memories = document["memories"]
    position = {m["id"]: i for i, m in enumerate(memories)}
    superseded = {m["id"]: m["superseded_by"] for m in memories if "superseded_by" in m}
    consolidated = {m["id"]: m["consolidated_into"] for m in memories if "consolidated_into" in m}
    assert superseded == built.superseded
    assert consolidated == built.consolidated
    assert {m["id"] for m in memories if m.get("parent_id")} == built.chunks
    for m in memories:
        for ref in (m.get("parent_id"), m.get("consolidated_into"), m.get("superseded_by")):
            if ref:
                assert position[ref] < position[m["id"]], (m["id"], ref)


def test_the_conversion_does_not_depend_on_the_order_of_the_rows(
    built: reference.Reference,
) -> None:
    data = sources.read_sqlite(built.path)
    first = convert.to_export(data, namespace="ns").document
    for rows in data.tables.values():
        random.Random(7).shuffle(rows)
    second = convert.to_export(data, namespace="ns").document
    for section in convert.SECTION_ORDER:
        key = "id" if section in ("memories", "entities", "goals") else None
        a = sorted(first[section], key=lambda r: str(r.get(key) if key else sorted(r.items())))
        b = sorted(second[section], key=lambda r: str(r.get(key) if key else sorted(r.items())))
        assert a == b, section
    levels = ordering.memory_levels(second["memories"])
    seen: set[str] = set()
    for group in levels:
        for m in group:
            refs = {m.get("parent_id"), m.get("consolidated_into"), m.get("superseded_by")}
            assert refs - {None} <= seen, m["id"]
        seen |= {m["id"] for m in group}


def test_a_version_1_export_keeps_chunks_apart_from_consolidated_sources(
    built: reference.Reference,
) -> None:
    """A version 1 export writes parent_id but not chunk_index: a parent that is a summary
    took in consolidated sources; any other parent was split into chunks."""
    data = sources.read_backup_v1(built.export_v1())
    memories = convert.to_export(data, namespace="ns").document["memories"]
    chunks = {m["id"]: m["chunk_index"] for m in memories if m.get("parent_id")}
    assert set(chunks) == built.chunks
    assert sorted(chunks.values()) == [0, 1, 2]
    assert {
        m["id"]: m["consolidated_into"] for m in memories if "consolidated_into" in m
    } == built.consolidated


def test_fields_ids_and_times_are_kept(built: reference.Reference) -> None:
    document = convert.to_export(sources.read_sqlite(built.path)).document
    by_id = {m["id"]: m for m in document["memories"]}
    assert set(by_id) == set(built.tokens)
    for memory_id, created in built.created_at.items():
        assert by_id[memory_id]["created_at"].startswith(created.replace(" ", "T"))
        assert by_id[memory_id]["created_at"].endswith("+00:00")
    rich = next(m for m in by_id.values() if m.get("agent") == "claude-code")
    assert rich["namespace"] == "team"
    assert (rich["access_count"], rich["useful_count"], rich["valence"]) == (7, 3, 0.4)
    assert rich["tags"] == ["people", "preference"]
    assert rich["expires_at"] == "2030-01-01T00:00:00+00:00"
    assert by_id[built.archived_id]["is_active"] is False
    goal = document["goals"][0]
    assert goal["id"] == built.goal_id
    assert "milestones" not in goal["metadata"]
    assert [m["sort_order"] for m in document["goal_milestones"]] == [0, 1]
    assert document["goal_links"][0]["goal_id"] == built.goal_id


def test_settings_keep_only_choices_this_version_has(built: reference.Reference) -> None:
    conversion = convert.to_export(sources.read_sqlite(built.path))
    key, value = built.changed_setting
    assert conversion.document["settings"] == {key: value}
    reasons = " ".join(x.reason for x in conversion.left_out if x.kind == "settings")
    for left in ("embedding.model", "server.port", "reference.only_setting", "fts_weight"):
        assert left in reasons
    assert conversion.ai_settings == {"ai.api_key": reference.API_KEY}
    tables = {x.kind: x.reason for x in conversion.left_out}
    assert "starts afresh" in tables["access_log"]
    assert "no counterpart" in tables["predictions"]  # a table of a later version
    assert "ai.api_key" not in conversion.document["settings"]


def test_an_encrypted_export_opens_only_with_its_passphrase(
    built: reference.Reference, tmp_path: Path
) -> None:
    path = tmp_path / "backup.enc"
    path.write_bytes(reference.encrypted(built.export_v1(), "correct horse battery"))
    data = sources.read_path(path, "correct horse battery")
    assert len(data.rows("memories")) == built.counts["memories"]
    with pytest.raises(sources.WrongPassphrase):
        sources.read_path(path, "wrong horse battery")


def test_a_file_that_is_no_reference_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id TEXT)")
    with pytest.raises(sources.ReferenceError, match="no memories table"):
        sources.read_path(path)
    with pytest.raises(sources.ReferenceError, match="version 1"):
        sources.read_backup_v1({"version": 2, "memories": []})


def test_values_beyond_the_limits_here_are_fitted_or_left_out_and_reported(
    built: reference.Reference,
) -> None:
    """A live write here bounds tags, namespaces and content; the reference does not. A row
    must not make the whole import refused: it is fitted (or left out) and reported."""
    data = sources.read_sqlite(built.path)
    rows = data.rows("memories")
    rows[0]["namespace"] = "my project"
    rows[1]["content"] = "x" * (convert.CONTENT_MAX + 1)
    data.tables["memory_tags"].append({"memory_id": rows[2]["id"], "tag": "t" * 300})
    conversion = convert.to_export(data)
    by_id = {m["id"]: m for m in conversion.document["memories"]}
    assert by_id[rows[0]["id"]]["namespace"] == "my-project"
    assert rows[1]["id"] not in by_id
    assert max(len(t) for t in by_id[rows[2]["id"]]["tags"]) == 100
    reasons = " ".join(x.reason for x in conversion.left_out)
    for reported in ("does not fit the rule", "content longer than", "longer than 100"):
        assert reported in reasons


def test_a_live_database_in_wal_mode_is_read_with_its_latest_writes(
    built: reference.Reference,
) -> None:
    """The reference runs in WAL mode: its latest commits may sit in the log, not yet in the
    file. They are read, and the file itself is left as it was."""
    writer = sqlite3.connect(built.path)
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute(
            "INSERT INTO memories (id, content) VALUES ('01JLATEST0000000000000000A', 'latest')"
        )
        writer.commit()
        before = _digest(built.path)
        data = sources.read_sqlite(built.path)
        assert "01JLATEST0000000000000000A" in {m["id"] for m in data.rows("memories")}
        assert _digest(built.path) == before
    finally:
        writer.close()


def test_a_file_that_is_not_sqlite_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    path.write_bytes(sources.SQLITE_MAGIC + b"\x00" * 200)
    with pytest.raises(sources.ReferenceError, match=r"broken\.db"):
        sources.read_sqlite(path)


def test_a_deadline_in_words_is_kept_in_the_goals_metadata_and_reported() -> None:
    """The reference stores a goal's deadline as the text it was given."""
    data = sources.ReferenceData(kind="json")
    data.tables = {
        "memories": [],
        "goals": [{"id": "01JG0A1000000000000000000A", "title": "Ship", "deadline": "next week"}],
    }
    conversion = convert.to_export(data)
    goal = conversion.document["goals"][0]
    assert "deadline" not in goal
    assert goal["metadata"] == {"reference_deadline": "next week"}
    assert [x.kind for x in conversion.left_out] == ["goals"]


def test_tag_alias_keys_come_across_and_a_bad_one_is_reported() -> None:
    report = Report()
    kept, _ai = settings_of({"tag_alias.k8s": "kubernetes", "tag_alias.": "nothing"}, report)
    assert kept == {"tag_alias.k8s": "kubernetes"}
    (refused,) = [x.reason for x in report.items()]
    assert refused.startswith("tag_alias.: refused by this version's schema")
