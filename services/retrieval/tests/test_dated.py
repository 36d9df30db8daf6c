"""Questions that ask when (pure): what counts as asking for a time, what counts as naming one,
and the head ordered again with its scores handed out sorted."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from exocortex.core.records import MemoryRecord
from exocortex.retrieval.search.dated import asks_when, dated_first, names_a_time, weight
from exocortex.retrieval.search.fusion import Fused
from exocortex.retrieval.search.results import ScoredMemory


def _scored(memory_id: str, content: str, score: float) -> ScoredMemory:
    now = datetime.now(UTC)
    memory = MemoryRecord(
        id=memory_id, namespace="ns", content=content, content_type="note", source="api",
        source_uri=None, importance=0.5, valence=0.0, is_active=True, is_metadata=False,
        parent_id=None, chunk_index=None, consolidated_into=None, superseded_by=None,
        content_hash="h", keywords="", embedding_model="m", access_count=0,
        last_accessed_at=None, useful_count=0, expires_at=None, provider=None, model_id=None,
        model_name=None, agent=None, session_id=None, conversation_id=None, metadata={},
        enrichment_status="done", created_at=now, updated_at=now, version=1,
    )  # fmt: skip
    return ScoredMemory(memory=memory, score=score, fused=Fused(memory_id))


@pytest.mark.parametrize(
    "query",
    [
        "When did we move the staging database?",
        "what date is the tax deadline",
        "Which year did she start the band?",
        "how long ago was the last outage",
    ],
)
def test_questions_that_ask_for_a_time(query: str) -> None:
    assert asks_when(query)


@pytest.mark.parametrize(
    "query", ["staging database migration", "what did we decide about the cache", "whenever"]
)
def test_questions_that_do_not(query: str) -> None:
    assert not asks_when(query)


@pytest.mark.parametrize(
    "text",
    [
        "Moved the staging database last Friday.",
        "I went to the support group yesterday.",
        "The release is planned for 12/03.",
        "Started the band in 2019.",
        "We met on the 7th, after the conference.",
        "Signed the lease in March.",
        "That was two weeks ago.",
    ],
)
def test_texts_that_name_a_time(text: str) -> None:
    assert names_a_time(text)


@pytest.mark.parametrize(
    "text",
    [
        "The staging database runs Postgres with three replicas.",
        "We may need a bigger disk.",  # the verb, not the month
        "She has 3 kids and 2 dogs.",
    ],
)
def test_texts_that_do_not(text: str) -> None:
    assert not names_a_time(text)


def _head() -> list[ScoredMemory]:
    return [
        _scored("plan", "The staging database move needs a maintenance window.", 1.0),
        _scored("talk", "We argued for an hour about the staging database move.", 0.9),
        _scored("done", "Moved the staging database last Friday.", 0.8),
        _scored("cat", "The cat refuses the new dry food.", 0.1),
    ]


def test_a_memory_that_names_a_time_rises_when_the_query_asks_when() -> None:
    out = dated_first("when did we move the staging database", _head(), 0.25)
    assert [s.memory.id for s in out] == ["done", "plan", "talk", "cat"]
    # The head's scores, handed out best first in the new order.
    assert [s.score for s in out] == [1.0, 0.9, 0.8, 0.1]


def test_a_small_weight_only_breaks_near_ties() -> None:
    out = dated_first("when did we move the staging database", _head(), 0.15)
    assert [s.memory.id for s in out] == ["plan", "done", "talk", "cat"]


def test_nothing_moves_off_or_when_the_query_does_not_ask_when() -> None:
    assert [s.memory.id for s in dated_first("staging database move", _head(), 1.0)] == [
        "plan",
        "talk",
        "done",
        "cat",
    ]
    assert [s.memory.id for s in dated_first("when was it", _head(), 0.0)] == [
        "plan",
        "talk",
        "done",
        "cat",
    ]


def test_weight_setting() -> None:
    assert weight({}) == 0.2
    assert weight({"scoring.dated_weight": "0.2"}) == 0.2
    assert weight({"scoring.dated_weight": "0"}) == 0.0
    assert weight({"scoring.dated_weight": "-1"}) == 0.2
    assert weight({"scoring.dated_weight": "x"}) == 0.2
