"""The servicers hand the services domain types: a field the caller left unset arrives as None
(so the service's default applies), one set to an empty value arrives as given."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.core.records import Attribution
from exocortex.ingest.store.servicer import memory_input
from exocortex.ingest.update.servicer import memory_changes
from exocortex.proto.v1 import common_pb2, ingest_pb2


def test_an_unset_store_field_is_none_and_a_set_one_is_kept() -> None:
    bare = memory_input(ingest_pb2.StoreMemoryRequest(content="x"))
    assert (bare.content_type, bare.source, bare.source_uri) == (None, None, None)
    assert (bare.importance, bare.valence, bare.is_metadata, bare.expires_at) == (None,) * 4
    assert bare.attribution == Attribution()

    when = Timestamp()
    when.FromDatetime(datetime(2026, 1, 2, tzinfo=UTC))
    full = memory_input(
        ingest_pb2.StoreMemoryRequest(
            content="x",
            namespace="team",
            content_type="note",
            source_uri="",
            importance=0.0,
            is_metadata=False,
            expires_at=when,
            tags=["a", "b"],
            attribution=common_pb2.Attribution(agent="", model_name="m"),
            benchmark=True,
        )
    )
    assert full.content_type == "note"
    assert full.source_uri == ""  # given empty: the store decides what an empty uri means
    assert full.importance == 0.0
    assert full.is_metadata is False
    assert full.expires_at == datetime(2026, 1, 2, tzinfo=UTC)
    assert full.tags == ("a", "b")
    assert full.attribution.given() == {"model_name": "m", "agent": ""}
    assert full.benchmark


def test_an_update_changes_only_what_was_sent() -> None:
    nothing = memory_changes(ingest_pb2.UpdateMemoryRequest(id="m1"))
    assert nothing.id == "m1"
    assert (nothing.content, nothing.tags, nothing.is_active, nothing.namespace) == (None,) * 4
    assert nothing.attribution.given() == {}

    cleared_tags = memory_changes(
        ingest_pb2.UpdateMemoryRequest(
            id="m1", tags=ingest_pb2.StringList(values=[]), is_active=False, clear_fields=["agent"]
        )
    )
    assert cleared_tags.tags == ()  # an empty list replaces the tags; None would keep them
    assert cleared_tags.is_active is False
    assert cleared_tags.clear_fields == ("agent",)
