import pytest

from exocortex.core.errors import InvalidArgument, TooLarge
from exocortex.ingest.store import validation


def test_namespace_rules() -> None:
    assert validation.check_namespace("") == "default"
    assert validation.check_namespace("team.alpha:notes-1") == "team.alpha:notes-1"
    with pytest.raises(InvalidArgument) as err:
        validation.check_namespace("has space")
    assert err.value.field == "namespace"


def test_content_limits() -> None:
    with pytest.raises(InvalidArgument):
        validation.check_content("   ", 10)
    with pytest.raises(TooLarge) as err:
        validation.check_content("x" * 11, 10)
    assert "10" in err.value.message


def test_metadata_must_be_an_object() -> None:
    assert validation.parse_metadata("") == {}
    assert validation.parse_metadata('{"a": 1}') == {"a": 1}
    for raw in ("[1]", "not json"):
        with pytest.raises(InvalidArgument):
            validation.parse_metadata(raw)


def test_ranges_and_choices() -> None:
    assert validation.check_range(0.5, 0, 1, "importance") == 0.5
    with pytest.raises(InvalidArgument):
        validation.check_range(1.5, 0, 1, "importance")
    with pytest.raises(InvalidArgument) as err:
        validation.check_choice("poem", validation.CONTENT_TYPES, "content_type")
    assert "text" in err.value.message
