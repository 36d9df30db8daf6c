"""What the benchmark scripts share about the reports they write in docs/benchmarks/."""

from __future__ import annotations

from pathlib import Path


def hand_marker(script: str) -> str:
    """The line after which a report is written by hand (measurements made outside the script
    that writes the rest) and survives a new run of ``script``."""
    return f"<!-- written by hand below: kept by tests/bench/{script} -->"


def kept_by_hand(path: Path, script: str) -> str:
    """The hand-written tail of an earlier report (from its marker on), or nothing."""
    if not path.is_file():
        return ""
    earlier = path.read_text()
    at = earlier.find(hand_marker(script))
    return "\n" + earlier[at:] if at >= 0 else ""
