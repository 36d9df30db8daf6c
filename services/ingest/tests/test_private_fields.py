"""Private blocks leave every user text field a write takes, not only the content (pure)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exocortex.core.db.settings_store import DEFAULT_SETTINGS
from exocortex.core.errors import InvalidArgument
from exocortex.ingest.goals.service import check_description, check_title
from exocortex.ingest.store import validation
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import MemoryInput
from exocortex.ingest.store.prepare import prepare
from exocortex.ingest.store.servicer import memory_input
from exocortex.ingest.update.entities import check_aliases, check_name
from exocortex.proto.v1 import common_pb2, ingest_pb2


def _request(**fields: Any) -> MemoryInput:
    """A store request as the servicer hands it to the store path."""
    return memory_input(ingest_pb2.StoreMemoryRequest(**fields))


CONFIG = WriteConfig.from_settings(DEFAULT_SETTINGS)
SECRET = "tok-PRIVATE-7781"


def _hidden(text: str = SECRET) -> str:
    return f"<private class='k'>{text}</private>"


def test_a_store_keeps_no_private_text_in_any_field() -> None:
    p = prepare(
        _request(
            content=f"Public note {_hidden()} about the release.",
            tags=["release", _hidden(), f"ops{_hidden()}", f"<PRIVATE>{SECRET}"],
            metadata_json=json.dumps(
                {
                    "ticket": f"T-1 {_hidden()}",
                    _hidden(): "the key was private",
                    "nested": [{"k": _hidden()}],
                    "agent": f"bot{_hidden()}",
                }
            ),
            source_uri=f"file:///notes/{_hidden()}a.md",
            attribution=common_pb2.Attribution(session_id=_hidden(), provider=f"acme{_hidden()}"),
        ),
        CONFIG,
        max_chars=10_000,
    )
    everything = json.dumps(
        [p.content, p.tags, p.given_tags, p.metadata, p.source_uri, p.attribution, p.keywords]
    )
    assert SECRET not in everything
    assert "the key was private" not in everything
    assert p.given_tags == ["release", "ops"]
    assert p.metadata["ticket"] == "T-1 "
    assert p.source_uri == "file:///notes/a.md"
    assert p.attribution["session_id"] is None
    assert p.attribution["provider"] == "acme"
    assert p.attribution["agent"] == "bot"


def test_metadata_is_stripped_wherever_it_is_parsed() -> None:
    parsed = validation.parse_metadata(json.dumps({"a": {"b": [f"x{_hidden()}"]}}))
    assert parsed == {"a": {"b": ["x"]}}


def test_goal_and_milestone_titles_and_descriptions() -> None:
    assert check_title(f"Ship v2 {_hidden()}") == "Ship v2"
    assert check_title(f"Step {_hidden()}", "title") == "Step"
    assert check_description(f"why: {_hidden()} because") == "why:  because"
    with pytest.raises(InvalidArgument) as err:
        check_title(_hidden())
    assert err.value.field == "title"
    assert SECRET not in err.value.message


def test_entity_names_and_aliases() -> None:
    assert check_name(f"Atlas{_hidden()}") == "Atlas"
    assert check_aliases(["atl", _hidden(), f"AT{_hidden()}"]) == ["atl", "AT"]
    with pytest.raises(InvalidArgument) as err:
        check_name(f"<private>{SECRET}")
    assert err.value.field == "name"


def test_a_required_field_that_was_all_private_is_refused_by_name() -> None:
    with pytest.raises(InvalidArgument) as err:
        validation.required_text(f"  {_hidden()}  ", "source_uri")
    assert err.value.field == "source_uri"
    assert "private" in err.value.message
    assert validation.optional_text(_hidden()) is None
