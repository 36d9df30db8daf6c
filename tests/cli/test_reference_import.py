"""``exo import`` brings the reference product's memory across: its SQLite database (never
modified) and its encrypted export, into the real stack. Counts per kind equal, ids and times
kept, every memory found by a word of its own, a dry run and a second run change nothing, and a
wrong passphrase writes nothing."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from exocortex.testing import reference
from exocortex.testing.wait import until

if TYPE_CHECKING:
    from conftest import Exo

PASSPHRASE = "moving in passphrase"
# Sections of the export whose rows the reference's data gives.
SECTIONS = (
    "memories",
    "entities",
    "memory_entities",
    "entity_relationships",
    "memory_links",
    "contradictions",
    "consolidations",
    "goals",
    "goal_milestones",
    "goal_links",
)


def _export(url: str, namespace: str) -> dict[str, Any]:
    reply = httpx.get(f"{url}/api/export", params={"namespace": namespace}, timeout=120)
    assert reply.status_code == 200, reply.text
    document: dict[str, Any] = reply.json()
    document.pop("exported_at")
    return document


def _counts(document: dict[str, Any]) -> dict[str, int]:
    return {s: len(document[s]) for s in SECTIONS}


def _found(url: str, namespace: str, token: str) -> set[str]:
    reply = httpx.post(
        f"{url}/api/memories/search",
        # compact: no access is counted, so searching leaves the memories as they are
        json={"query": token, "namespace": namespace, "limit": 5, "compact": True},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text
    return {r["id"] for r in reply.json()["results"]}


def assert_every_memory_came_across(
    url: str, namespace: str, ref: reference.Reference, document: dict[str, Any]
) -> None:
    memories = {m["id"]: m for m in document["memories"]}
    assert set(memories) == set(ref.tokens)
    for memory_id, created in ref.created_at.items():
        assert memories[memory_id]["created_at"][:23] == created.replace(" ", "T")[:23]
    assert {m for m, row in memories.items() if row["is_active"]} == ref.active
    parents = {m["id"]: m["parent_id"] for m in memories.values() if m.get("parent_id")}
    assert set(parents) == ref.chunks
    for memory_id, token in ref.tokens.items():
        if memory_id not in ref.active:
            continue  # archived and replaced versions are kept, and left out of search
        # A chunk is found itself or through its memory; the indexes follow the committed
        # rows, so each is awaited (generously: a loaded machine indexes slowly).
        wanted = {memory_id, parents.get(memory_id)}

        def found(token: str = token, wanted: set[str | None] = wanted) -> set[str | None]:
            return wanted & set(_found(url, namespace, token))

        until(
            found,
            what=f"{memory_id} found by its word {token}",
            seconds=300,
            interval=0.5,
        )


@pytest.fixture
def settings_kept(gateway_url: str) -> Iterator[None]:
    """The reference's setting is applied to the shared stack: put back afterwards."""
    key = reference.Reference.changed_setting[0]
    before = httpx.get(f"{gateway_url}/api/settings", timeout=60).json()[key]
    yield
    reply = httpx.patch(f"{gateway_url}/api/settings", json={key: before}, timeout=60)
    assert reply.status_code == 200, reply.text


@pytest.mark.usefixtures("settings_kept")
def test_a_reference_database_comes_across_whole_and_a_second_run_changes_nothing(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    ref = reference.build(tmp_path / "exocortex.db")
    digest = hashlib.sha256(ref.path.read_bytes()).hexdigest()

    dry = exo.json("import", str(ref.path), "-n", namespace, "--dry-run")
    assert dry["dry_run"] is True
    assert dry["sections"]["memories"] == {"created": ref.counts["memories"]}, dry["reasons"]
    assert dry["sections"]["goal_links"] == {"created": 1}  # its memory is new in this import
    assert _counts(_export(exo.url, namespace)) == dict.fromkeys(SECTIONS, 0)

    first = exo.json("import", str(ref.path), "-n", namespace, "--in-flight", "4")
    assert first["sections"]["memories"] == {"created": ref.counts["memories"]}, first["reasons"]
    document = _export(exo.url, namespace)
    assert _counts(document) == ref.counts
    assert_every_memory_came_across(exo.url, namespace, ref, document)
    lineage = {m["id"]: m.get("superseded_by") for m in document["memories"]}
    for old, new in ref.superseded.items():
        assert lineage[old] == new
    key, value = ref.changed_setting
    assert httpx.get(f"{exo.url}/api/settings", timeout=60).json()[key] == value
    # The one setting the user chose there, counted once (written, or changed from ours).
    assert sum(first["sections"]["settings"].values()) == 1, first["sections"]["settings"]
    assert first["ai_settings_applied"] == []  # only with --with-api-key
    assert "ai.api_key" in json.dumps(first["left_out"])

    second = exo.json("import", str(ref.path), "-n", namespace)
    assert second["sections"]["memories"] == {"already here": ref.counts["memories"]}
    assert all("created" not in counts for counts in second["sections"].values()), second[
        "sections"
    ]
    assert _export(exo.url, namespace) == document
    assert hashlib.sha256(ref.path.read_bytes()).hexdigest() == digest


@pytest.fixture
def encrypted_export(tmp_path: Path) -> tuple[reference.Reference, Path]:
    ref = reference.build(tmp_path / "exocortex.db")
    path = tmp_path / "exocortex-backup.enc"
    path.write_bytes(reference.encrypted(ref.export_v1(), PASSPHRASE))
    return ref, path


def test_a_wrong_passphrase_is_a_clear_error_and_writes_nothing(
    exo: Exo, namespace: str, encrypted_export: tuple[reference.Reference, Path]
) -> None:
    _, path = encrypted_export
    result = exo("import", str(path), "-n", namespace, input="not the passphrase\n")
    assert result.exit_code == 1
    assert "passphrase does not open" in result.output
    assert _counts(_export(exo.url, namespace)) == dict.fromkeys(SECTIONS, 0)


def test_an_encrypted_export_comes_across_with_its_passphrase(
    exo: Exo,
    namespace: str,
    encrypted_export: tuple[reference.Reference, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ref, path = encrypted_export
    monkeypatch.setenv("EXO_IMPORT_PASSPHRASE", PASSPHRASE)
    report = exo.json("import", str(path), "-n", namespace)
    assert report["sections"]["memories"] == {"created": ref.counts["memories"]}
    document = _export(exo.url, namespace)
    # A version 1 export does not carry the consolidations table.
    assert _counts(document) == {**ref.counts, "consolidations": 0}
    assert_every_memory_came_across(exo.url, namespace, ref, document)
    again = exo.json("import", str(path), "-n", namespace)
    assert all("created" not in counts for counts in again["sections"].values()), again
    assert _export(exo.url, namespace) == document


def test_without_a_path_the_database_named_by_exocortex_db_path_is_imported(
    exo: Exo, namespace: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = reference.build(tmp_path / "elsewhere.db")
    monkeypatch.setenv("EXOCORTEX_DB_PATH", str(ref.path))
    dry = exo.json("import", "-n", namespace, "--dry-run")
    assert dry["sections"]["memories"] == {"created": ref.counts["memories"]}
    shown = exo("import", "-n", namespace, "--dry-run")
    assert shown.exit_code == 0, shown.output
    assert "nothing was changed" in shown.output
    assert "would create" in shown.output
    monkeypatch.setenv("EXOCORTEX_DB_PATH", str(tmp_path / "missing.db"))
    result = exo("import", "-n", namespace)
    assert result.exit_code == 2
    unboxed = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.output).split())
    assert "no reference database at" in unboxed


def test_a_json_export_then_the_database_fills_in_the_versions_the_export_lacked(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    """The JSON export does not carry superseded_by; the database does. Importing the export
    first and the database after leaves every memory once and links each old version to the
    one that replaced it."""
    ref = reference.build(tmp_path / "exocortex.db")
    export = tmp_path / "exocortex-backup.json"
    export.write_text(json.dumps(ref.export_v1()))
    exo.json("import", str(export), "-n", namespace)
    before = {m["id"]: m for m in _export(exo.url, namespace)["memories"]}
    assert all(not before[old].get("superseded_by") for old in ref.superseded)
    exo.json("import", str(ref.path), "-n", namespace)
    after = {m["id"]: m for m in _export(exo.url, namespace)["memories"]}
    assert set(after) == set(before)
    for old, new in ref.superseded.items():
        assert after[old]["superseded_by"] == new
