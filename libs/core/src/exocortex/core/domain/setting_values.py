"""Reading a number from the runtime settings (the ``settings`` table, all values text) the way
every consumer should: a value that is missing, does not parse or is NaN means the default, and
the rest is clamped to a sane range, so a typo never stops the work that reads it."""

from __future__ import annotations

from collections.abc import Mapping


def clamped_float(
    settings: Mapping[str, str], key: str, default: float, lo: float, hi: float
) -> float:
    try:
        value = float(settings.get(key, default))
    except ValueError:
        return default
    if value != value:  # NaN
        return default
    return min(hi, max(lo, value))
