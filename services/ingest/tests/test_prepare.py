"""The per-memory transforms of the write path (pure: no database, no model)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exocortex.core.db.settings_store import DEFAULT_SETTINGS
from exocortex.core.errors import InvalidArgument, TooLarge
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import MemoryInput
from exocortex.ingest.store.prepare import prepare
from exocortex.ingest.store.rows import build_rows
from exocortex.ingest.store.servicer import memory_input
from exocortex.proto.v1 import common_pb2, ingest_pb2


def _request(**fields: Any) -> MemoryInput:
    """A store request as the servicer hands it to the store path."""
    return memory_input(ingest_pb2.StoreMemoryRequest(**fields))


CONFIG = WriteConfig.from_settings(DEFAULT_SETTINGS)


def test_defaults_tags_and_attribution_from_metadata() -> None:
    p = prepare(
        _request(
            content="  We decided on <private>secret</private> NextJS.  ",
            tags=["Front_End", "nextjs"],
            metadata_json=json.dumps({"agent": "coder", "model": "m-1"}),
            attribution=common_pb2.Attribution(provider="acme"),
        ),
        CONFIG,
        max_chars=10_000,
    )
    assert p.content == "We decided on  NextJS."
    assert p.tags[:2] == ["front-end", "next.js"]
    assert "decision" in p.tags
    assert p.given_tags == ["front-end", "next.js"]
    assert p.importance == 0.5
    assert p.attribution["agent"] == "coder"
    assert p.attribution["model_name"] == "m-1"
    assert p.attribution["provider"] == "acme"
    assert p.namespace == "default"
    assert not p.is_metadata


def test_benchmark_items_are_metadata_unembedded_and_unchunked() -> None:
    p = prepare(
        _request(content="Run 3. " + "x " * 1000, benchmark=True),
        CONFIG,
        max_chars=10_000,
    )
    assert p.is_metadata
    assert p.importance == 0.15
    assert "benchmark-artifact" in p.tags
    assert p.metadata["mode"] == "benchmark"
    assert p.chunks == []
    assert p.embed_texts() == []


def test_long_content_is_chunked_and_the_parent_gets_no_vector() -> None:
    import numpy as np

    content = "\n\n".join(f"Paragraph {i}. " + "words here " * 40 for i in range(10))
    p = prepare(_request(content=content), CONFIG, max_chars=10_000)
    assert len(p.chunks) > 3
    assert p.embed_texts() == p.chunks
    assert not p.semantic_dedup_eligible(CONFIG)
    vectors = [np.ones(4, dtype=np.float32) for _ in p.chunks]
    rows = build_rows(p, vectors, model="m", dim=4)
    assert rows[0].embedding is None
    assert all(r.parent_id == rows[0].id for r in rows[1:])
    assert [r.chunk_index for r in rows[1:]] == list(range(len(p.chunks)))
    assert all(r.embedding is not None for r in rows[1:])


@pytest.mark.parametrize(
    ("fields", "error", "field"),
    [
        ({"content": "<private>x</private>"}, InvalidArgument, "content"),
        ({"content": "x" * 10_001}, TooLarge, "content"),
        ({"content": "ok", "importance": 1.5}, InvalidArgument, "importance"),
        ({"content": "ok", "content_type": "poem"}, InvalidArgument, "content_type"),
        ({"content": "ok", "metadata_json": "[1]"}, InvalidArgument, "metadata"),
        ({"content": "ok", "namespace": "bad space"}, InvalidArgument, "namespace"),
    ],
)
def test_bad_input_names_the_field(
    fields: dict[str, object], error: type[Exception], field: str
) -> None:
    with pytest.raises(error) as caught:
        prepare(_request(**fields), CONFIG, max_chars=10_000)
    assert caught.value.field == field  # type: ignore[attr-defined]


def test_semantic_dedup_rules() -> None:
    short = prepare(_request(content="tiny"), CONFIG, max_chars=10_000)
    assert not short.semantic_dedup_eligible(CONFIG)
    text = "A sufficiently long memory text to be considered for semantic dedup checks."
    ok = prepare(_request(content=text), CONFIG, max_chars=10_000)
    assert ok.semantic_dedup_eligible(CONFIG)
    exempt = WriteConfig.from_settings({**DEFAULT_SETTINGS, "dedup.exempt_tags": '["log"]'})
    tagged = prepare(_request(content=text, tags=["log"]), exempt, max_chars=10_000)
    assert not tagged.semantic_dedup_eligible(exempt)


def test_default_attribution_fills_only_what_is_missing() -> None:
    p = prepare(
        _request(
            content="Attribution defaults.", attribution=common_pb2.Attribution(agent="given")
        ),
        CONFIG,
        max_chars=10_000,
        default_attribution={"agent": "default-agent", "provider": "default-provider"},
    )
    assert p.attribution["agent"] == "given"
    assert p.attribution["provider"] == "default-provider"
    assert p.attribution["model_id"] is None
