"""Reading the store's settings in a job: values are checked against their schema when written,
so a value that does not parse is an old or hand-edited row, read as the default."""

from __future__ import annotations

from collections.abc import Mapping


def int_setting(settings: Mapping[str, str], key: str, default: int) -> int:
    try:
        return int(settings.get(key, default))
    except ValueError:
        return default


def float_setting(settings: Mapping[str, str], key: str, default: float) -> float:
    try:
        value = float(settings.get(key, default))
    except ValueError:
        return default
    return value if value == value else default  # NaN
