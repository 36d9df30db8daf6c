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

    def __add__(self, other: Section) -> Section:
        return Section(f"{self.text}\n\n{other.text}", self.body_chars + other.body_chars)


def _section(header: str, lines: list[str]) -> Section:
    body = "\n".join(lines).strip()
    text = f"{header}\n\n{body}".strip() if header else body
    return Section(text, len(re.sub(r"\s", "", body)))


def split_sections(markdown: str) -> list[Section]:
    """Sections at ``## `` lines (deeper headers do not split; the preamble is its own section).
    A section with under 50 non-whitespace body characters is merged into the previous one
    (or into the next when it comes first); empty sections are dropped. No text is lost."""
    raw: list[Section] = []
    header = ""
    lines: list[str] = []
    for line in markdown.splitlines():
        if _H2.match(line):
            raw.append(_section(header, lines))
            header, lines = line.strip(), []
        else:
            lines.append(line)
    raw.append(_section(header, lines))

    merged: list[Section] = []
    carry: Section | None = None
    for section in (s for s in raw if s.text):
        if carry is not None:
            section, carry = carry + section, None
        if section.body_chars >= MIN_SECTION_CHARS:
            merged.append(section)
        elif merged:
            merged[-1] = merged[-1] + section
        else:
            carry = section
    if carry is not None:
        merged.append(carry)
    return [s for s in merged if len(s.text) >= MIN_STORE_CHARS]
