"""What a conversion reports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LeftOut:
    """Items of one kind that do not come across, and why."""

    kind: str
    count: int
    reason: str
