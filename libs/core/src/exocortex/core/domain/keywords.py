"""Extra keyword-index text: the salient terms of a memory, its tags and entity names.

The keyword index weights this field above the body, so a memory is found by its main terms
even when they are a small part of a long text.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from exocortex.core.domain.vocabulary import STOPWORDS

MAX_KEYWORD_CHARS = 200
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+#-]{2,}")


def generate_keywords(
    content: str, tags: Iterable[str] = (), entity_names: Iterable[str] = ()
) -> str:
    """Entity names, then tags, then the most frequent non-stopword terms, up to 200 chars."""
    terms: dict[str, None] = {}
    for name in entity_names:
        terms.setdefault(name.lower(), None)
    for tag in tags:
        terms.setdefault(tag.replace("-", " "), None)
    words = [w.lower().rstrip(".-") for w in _WORD.findall(content)]
    counts = Counter(w for w in words if w not in STOPWORDS and len(w) > 3)
    for word, _ in sorted(counts.items(), key=lambda kv: (-kv[1], words.index(kv[0]))):
        terms.setdefault(word, None)
    out: list[str] = []
    size = 0
    for term in terms:
        if size + len(term) + (1 if out else 0) > MAX_KEYWORD_CHARS:
            break
        out.append(term)
        size += len(term) + (1 if len(out) > 1 else 0)
    return " ".join(out)
