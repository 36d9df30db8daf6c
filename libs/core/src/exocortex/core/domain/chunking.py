"""Splitting long memories into pieces that embed well, without losing any text.

Paragraphs (blank-line separated) are packed greedily up to the target size; a paragraph longer
than the target is split at sentence ends, and a sentence longer than the target at word
boundaries. Joining the chunks with whitespace gives back the content (modulo whitespace).
"""

from __future__ import annotations

import re

_PARAGRAPHS = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def needs_chunking(content: str, max_length: int) -> bool:
    return len(content) > max_length


def _words(text: str, target: int) -> list[str]:
    pieces: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > target:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def _units(paragraph: str, target: int) -> list[str]:
    if len(paragraph) <= target:
        return [paragraph]
    units: list[str] = []
    for sentence in _SENTENCE_END.split(paragraph):
        sentence = sentence.strip()
        if not sentence:
            continue
        units.extend([sentence] if len(sentence) <= target else _words(sentence, target))
    return units


def split_into_chunks(content: str, target_size: int = 500) -> list[str]:
    """Pieces of about ``target_size`` characters (never more, unless one word is longer)."""
    if target_size < 1:
        raise ValueError("target_size must be positive")
    chunks: list[str] = []
    current = ""
    for paragraph in _PARAGRAPHS.split(content):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        for i, unit in enumerate(_units(paragraph, target_size)):
            joiner = "\n\n" if i == 0 else " "
            if current and len(current) + len(joiner) + len(unit) > target_size:
                chunks.append(current)
                current = unit
            else:
                current = f"{current}{joiner}{unit}" if current else unit
    if current:
        chunks.append(current)
    return chunks
