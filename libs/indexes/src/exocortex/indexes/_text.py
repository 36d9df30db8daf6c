"""Turning free user text into plain search terms, shared by both keyword adapters.

User text is never handed to an engine's query parser: quotes, colons, parentheses, `-`, `*` or
`AND` would otherwise change the query's meaning or make it fail. Keeping the words and dropping
everything else makes every input a valid OR-of-terms query.
"""

from __future__ import annotations

import re

# Word characters of any script; everything else (query syntax included) separates terms.
_WORD = re.compile(r"\w+", re.UNICODE)

# A short English stop list: these words occur in almost every memory, so matching on them only
# adds noise, and a query made only of them should find nothing rather than everything.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "him",
        "her",
        "his",
        "its",
        "them",
        "what",
        "which",
        "who",
        "whom",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "am",
        "been",
        "being",
        "were",
        "so",
        "than",
        "too",
        "very",
        "can",
        "just",
    ]
)

# Longer tokens are almost always noise (hashes, base64) and are dropped by the index tokenizer.
MAX_TERM_CHARS = 40


def query_terms(text: str) -> list[str]:
    """Lower-cased words of `text` without stop words, duplicates or over-long tokens, in order."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).replace("_", " ").strip()
        for part in word.split():
            if part and len(part) <= MAX_TERM_CHARS and part not in ENGLISH_STOPWORDS:
                seen.setdefault(part, None)
    return list(seen)
