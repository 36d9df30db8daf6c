"""Time zone names are checked before ``ZoneInfo`` opens them as files."""

from __future__ import annotations

import pytest

from exocortex.core.domain.names import MAX_TIME_ZONE_CHARS, time_zone
from exocortex.core.errors import InvalidArgument


@pytest.mark.parametrize(
    "name",
    ["A" * 300, "A" * (MAX_TIME_ZONE_CHARS + 1), "America", "../etc", "/UTC", "UTC\x00", "Zürich"],
)
def test_bad_names_are_invalid_arguments_naming_the_field(name: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        time_zone(name, "tz")
    assert caught.value.field == "tz"


def test_real_names_and_the_default() -> None:
    assert time_zone("Europe/Paris").key == "Europe/Paris"
    assert time_zone("Etc/GMT+5").key == "Etc/GMT+5"
    assert time_zone(None).key == "UTC"
    assert time_zone("").key == "UTC"
