"""``exo import`` of a mem0 export (its ``get_all`` answer): one memory per item, its
categories as tags and where it came from kept in the metadata."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Exo

MEM0 = {
    "results": [
        {
            "id": "0b9e1c7a-8d2f-4f57-9a4e-2f0c1f8f4a11",
            "memory": "Prefers window seats on long flights",
            "hash": "c5b5f0a8",
            "metadata": {"source": "chat"},
            "categories": ["travel", "preferences"],
            "user_id": "alex",
            "created_at": "2025-06-01T10:00:00-07:00",
        },
        {
            "id": "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f",
            "memory": "Is allergic to peanuts",
            "user_id": "alex",
            "agent_id": "travel-agent",
            "run_id": "trip-42",
        },
    ]
}


def test_a_mem0_export_gives_one_memory_per_item_with_its_origin(
    exo: Exo, namespace: str, tmp_path: Path
) -> None:
    source = tmp_path / "mem0-export.json"
    source.write_text(json.dumps(MEM0))
    report = exo.json("import", str(source), "-n", namespace)
    assert report["memories"] == {"created": 2}
    found = exo.json("search", "window seats flights", "-n", namespace)["results"]
    memory = found[0]["memory"]
    assert memory["content"] == "Prefers window seats on long flights"
    assert {"travel", "preferences"} <= set(memory["tags"])
    assert memory["metadata"]["mem0_id"] == MEM0["results"][0]["id"]
    assert memory["metadata"]["mem0_user_id"] == "alex"
    allergy = exo.json("search", "peanuts allergy", "-n", namespace)["results"][0]["memory"]
    assert (allergy["agent"], allergy["session_id"]) == ("travel-agent", "trip-42")
