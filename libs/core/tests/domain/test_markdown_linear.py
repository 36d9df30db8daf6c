"""Splitting stays linear in the document's length, even when every section is short and is
merged into the one before it (the case that used to copy the growing text on every merge)."""

from __future__ import annotations

import time

from exocortex.core.domain.markdown import split_sections


def _document(megabytes: int) -> str:
    # Short sections (under the 50-character minimum) all merge into the first long one.
    first = "## Start\n\n" + "a long enough opening paragraph for a section. " * 3 + "\n"
    short = "## h\n\nshort body\n"
    return first + short * (megabytes * 1_000_000 // len(short))


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        split_sections(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_eight_times_the_text_takes_about_eight_times_as_long() -> None:
    small, large = _document(1), _document(8)
    sections = split_sections(large)
    # No text is lost in the merge: every short section's body is in the one section.
    assert len(sections) == 1
    assert sections[0].text.count("short body") == large.count("short body")
    ratio = _seconds(large) / _seconds(small)
    # Linear work gives about 8 (11 measured: allocation grows a little faster than the text);
    # copying the merged text on every merge gives about 64. The bound sits between the two
    # with room for a busy machine.
    assert ratio < 30, f"8 MB took {ratio:.1f}x as long as 1 MB"
