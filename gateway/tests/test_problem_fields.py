"""The `field` of a 400 names the request's field, as the client wrote it."""

from exocortex.gateway.problems import _field_path


def test_a_body_field_is_named_by_its_path() -> None:
    assert _field_path(("body", "memories", 0, "content")) == "memories.0.content"


def test_the_member_model_of_a_union_body_is_left_out() -> None:
    assert _field_path(("body", "ImportRequest", "memories")) == "memories"


def test_query_and_path_parameters_keep_their_name() -> None:
    assert _field_path(("query", "limit")) == "limit"
    assert _field_path(("path", "memory_id")) == "memory_id"
