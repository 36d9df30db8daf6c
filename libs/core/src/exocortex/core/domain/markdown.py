"""Splitting a markdown document into memories at its ``##`` headers."""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_SECTION_CHARS = 50
MIN_STORE_CHARS = 10
_H2 = re.compile(r"^##\s+\S")


@dataclass(frozen=True, slots=True)
class Section:
    # Header line(s) are kept in the text (the seed's CLI import dropped them).
    text: str
    # Non-whitespace characters outside header lines: what decides whether a section is short.
    body_chars: int


_SEPARATOR = "\n\n"


@dataclass(slots=True)
class _Run:
    """Sections being merged: their texts are joined once at the end, so a document of many
    short sections costs linear time (adding the text on each merge copied it every time)."""

    parts: list[str]
    body_chars: int

    def extend(self, other: _Run) -> None:
        self.parts.extend(other.parts)
        self.body_chars += other.body_chars

    def section(self) -> Section:
        return Section(_SEPARATOR.join(self.parts), self.body_chars)


def _run(header: str, lines: list[str]) -> _Run:
    body = "\n".join(lines).strip()
    text = f"{header}\n\n{body}".strip() if header else body
    return _Run([text] if text else [], len(_WHITESPACE.sub("", body)))


_WHITESPACE = re.compile(r"\s")


def split_sections(markdown: str) -> list[Section]:
    """Sections at ``## `` lines (deeper headers do not split; the preamble is its own section).
    A section with under 50 non-whitespace body characters is merged into the previous one
    (or into the next when it comes first); empty sections are dropped. No text is lost.
    Linear in the document's length."""
    raw: list[_Run] = []
    header = ""
    lines: list[str] = []
    for line in markdown.splitlines():
        if _H2.match(line):
            raw.append(_run(header, lines))
            header, lines = line.strip(), []
        else:
            lines.append(line)
    raw.append(_run(header, lines))

    merged: list[_Run] = []
    carry: _Run | None = None
    for run in (r for r in raw if r.parts):
        if carry is not None:
            carry.extend(run)
            run, carry = carry, None
        if run.body_chars >= MIN_SECTION_CHARS:
            merged.append(run)
        elif merged:
            merged[-1].extend(run)
        else:
            carry = run
    if carry is not None:
        merged.append(carry)
    sections = (r.section() for r in merged)
    return [s for s in sections if len(s.text) >= MIN_STORE_CHARS]
