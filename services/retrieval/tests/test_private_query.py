"""A search query's private blocks are never searched for nor recorded as a miss (pure)."""

from __future__ import annotations

import pytest

from exocortex.core.errors import InvalidArgument
from exocortex.retrieval.search.events import query_hash, to_event
from exocortex.retrieval.search.query import SearchQuery, validate
from exocortex.retrieval.search.results import SearchOutcome

SECRET = "tok-QUERY-5521"


def test_the_query_searched_has_no_private_block() -> None:
    query, _ = validate(SearchQuery(query=f"deploy <private>{SECRET}</private>"))
    assert query == "deploy"


def test_a_query_that_was_all_private_is_refused() -> None:
    with pytest.raises(InvalidArgument) as err:
        validate(SearchQuery(query=f"<PRIVATE a=1>{SECRET}"))
    assert err.value.field == "query"
    assert SECRET not in err.value.message


def test_a_miss_event_carries_only_the_public_query() -> None:
    req = SearchQuery(query=f"zebra <private>{SECRET}</private> notes")
    event = to_event(req, SearchOutcome(results=[], degraded=[]))
    assert SECRET not in event.SerializeToString().decode("utf-8", "replace")
    assert event.miss_query == "zebra  notes"
    assert event.query_hash == query_hash("zebra  notes")
