"""The checks a restore document passes before anything is written (backup/validation.py)."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest

from exocortex.core.errors import InvalidArgument
from exocortex.core.ids import new_id
from exocortex.maintenance.backup.validation import Model, check_items, restorable_settings

MODEL = Model("minilm-test", 4)


def _memory(**changes: Any) -> dict[str, Any]:
    memory: dict[str, Any] = {
        "id": new_id(),
        "namespace": "default",
        "content": "A memory as the export writes it",
        "content_type": "note",
        "source": "api",
        "importance": 0.5,
        "valence": 0.0,
        "is_active": True,
        "parent_id": None,
        "version": 1,
        "tags": ["a"],
        "created_at": "2026-12-01T10:00:00+00:00",
        "embedding_model": MODEL.fingerprint,
        "embedding": base64.b64encode(np.ones(4, dtype="<f4").tobytes()).decode(),
    }
    return {**memory, **changes}


def _check(*items: tuple[str, Any]) -> dict[str, int]:
    return check_items(items, model=MODEL, max_content_chars=1000)


def test_a_document_as_the_export_writes_it_passes() -> None:
    counts = _check(
        ("memories", _memory()),
        ("memories", _memory(parent_id=new_id(), chunk_index=0)),
        ("goals", {"id": new_id(), "namespace": "n", "title": "t", "status": "active"}),
        ("settings", {"scoring.recency_decay": "0.5", "ai.base_url": "https://x.example"}),
    )
    assert counts == {"memories": 2, "goals": 1, "settings": 1}


@pytest.mark.parametrize(
    ("item", "field"),
    [
        (_memory(id="../../x"), "memories.0.id"),
        (_memory(id="/etc/passwd"), "memories.0.id"),
        (_memory(id="01J" + "I" * 23), "memories.0.id"),  # I is not Crockford base32
        (_memory(namespace="../b"), "memories.0.namespace"),
        (_memory(content="x" * 1001), "memories.0.content"),
        (_memory(content="a\x00b"), "memories.0.content"),
        (_memory(importance=float("nan")), "memories.0.importance"),
        (_memory(version=True), "memories.0.version"),
        (_memory(created_at="2026-12-01"), "memories.0.created_at"),
        (_memory(embedding=base64.b64encode(bytes(12)).decode()), "memories.0.embedding"),
        (_memory(embedding=base64.b64encode(bytes(6)).decode()), "memories.0.embedding"),
        (
            _memory(embedding=base64.b64encode(np.full(4, np.inf, "<f4").tobytes()).decode()),
            "memories.0.embedding",
        ),
        ("not an object", "memories.0"),
    ],
)
def test_a_bad_memory_is_named_by_section_index_and_field(item: Any, field: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        _check(("memories", item))
    assert caught.value.field == field


def test_an_embedding_of_another_model_is_only_checked_for_shape() -> None:
    other = base64.b64encode(np.ones(8, dtype="<f4").tobytes()).decode()
    counts = _check(("memories", _memory(embedding_model="another-model", embedding=other)))
    assert counts == {"memories": 1}
    # The same 8 dimensions under the running model's name are the wrong shape.
    with pytest.raises(InvalidArgument):
        _check(("memories", _memory(embedding=other)))


def test_an_unknown_section_is_refused() -> None:
    with pytest.raises(InvalidArgument) as caught:
        _check(("memories", _memory()), ("shell_scripts", {"id": new_id()}))
    assert caught.value.field == "shell_scripts.0"


def test_settings_go_through_the_schema_and_ai_settings_are_skipped() -> None:
    kept, skipped = restorable_settings(
        {
            "scoring.recency_decay": "0.3",
            "ai.base_url": "https://collector.example.net",
            "ai.api_key": "sk-x",
            "legacy.key": "1",
            "ai.model": "m",
        }
    )
    assert kept == {"scoring.recency_decay": "0.3"}
    assert {s.key for s in skipped} == {"ai.base_url", "ai.api_key", "legacy.key", "ai.model"}
    for value in ("-1000", "nan", "1e309", "ten"):
        with pytest.raises(InvalidArgument) as caught:
            restorable_settings({"scoring.recency_decay": value})
        assert caught.value.field == "settings.scoring.recency_decay"
