"""How ``exo import`` cuts a converted reference document into phases and sends them: a part
goes only after every part it refers to is in, and a failure stops what was not sent yet.
Pure: the server is a function here."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from exocortex.cli import reference_import
from exocortex.core.reference import convert, sources
from exocortex.testing import reference


@pytest.fixture
def document(tmp_path: Path) -> dict[str, Any]:
    ref = reference.build(tmp_path / "exocortex.db", extra_memories=40)
    return convert.to_export(sources.read_sqlite(ref.path), namespace="ns").document


def _memory_refs(row: dict[str, Any]) -> set[str]:
    return {row[k] for k in ("parent_id", "consolidated_into", "superseded_by") if row.get(k)}


def test_every_part_is_sent_after_what_it_refers_to(document: dict[str, Any]) -> None:
    stages = reference_import.phases(document, size=7, max_bytes=4_000_000)
    sent: set[str] = set()
    lock = threading.Lock()
    order: list[str] = []

    def post(part: dict[str, Any]) -> dict[str, Any]:
        with lock:
            for memory in part["memories"]:
                assert _memory_refs(memory) <= sent, memory["id"]
            for link in part.get("memory_links", []):
                assert {link["source_id"], link["target_id"]} <= sent
            order.extend(m["id"] for m in part["memories"])
        time.sleep(0.01)  # a server's answer takes a moment: parts of a phase overlap
        with lock:
            sent.update(m["id"] for m in part["memories"])
        return {"sections": {}, "items": []}

    tally = reference_import.Tally(dry_run=False)
    done: list[int] = []
    reference_import.send(post, stages, tally, in_flight=4, advance=done.append)
    assert sorted(order) == sorted(m["id"] for m in document["memories"])
    assert sum(done) == sum(p.items for stage in stages for p in stage)
    assert all(p.items <= 7 for stage in stages for p in stage)
    assert tally.counts["memories"]["created"] == len(document["memories"])


def test_a_failed_part_stops_the_parts_not_sent_yet(document: dict[str, Any]) -> None:
    stages = reference_import.phases(document, size=5, max_bytes=4_000_000)
    assert len(stages) > 2
    seen: list[int] = []
    advanced: list[int] = []

    def post(part: dict[str, Any]) -> dict[str, Any]:
        seen.append(len(part["memories"]))
        raise RuntimeError("the stack went away")

    with pytest.raises(RuntimeError, match="went away"):
        reference_import.send(
            post,
            stages,
            reference_import.Tally(dry_run=False),
            in_flight=1,
            advance=advanced.append,
        )
    assert len(seen) == 1
    assert advanced == []


def test_a_dry_run_counts_a_row_referring_to_a_new_row_as_created(
    document: dict[str, Any],
) -> None:
    """The server rolls a dry run back, so a chunk's memory is not there for the chunk's part;
    it is new in this import, so the chunk would be created with it."""
    parent = next(m for m in document["memories"] if not m.get("parent_id"))
    chunk = {**parent, "id": "01JCHUNK0000000000000000AA", "parent_id": parent["id"]}
    tally = reference_import.Tally(dry_run=True)
    tally.add(reference_import.Part({"memories": [parent]}, 1), {"sections": {}, "items": []})
    reply = {
        "items": [
            {
                "section": "memories",
                "key": chunk["id"],
                "outcome": "conflict",
                "reason": "its parent is missing",
            }
        ]
    }
    tally.add(reference_import.Part({"memories": [chunk]}, 1), reply)
    assert tally.counts["memories"] == {"created": 2}
    assert not tally.reasons
