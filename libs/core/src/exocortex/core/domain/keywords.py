"""Extra keyword-index text: the salient terms of a memory, its tags and entity names.

The keyword index weights this field above the body, so a memory is found by its main terms
even when they are a small part of a long text.

The write path gives a memory the keywords enrichment would give it (``memory_keywords``: the
entity names found in its text included), so the entities are searchable as soon as the store
answers, and enrichment, finding nothing to change, writes no new version and no event for the
indexes to apply again.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from exocortex.core.domain.entities import extract_entities
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
    # Sorted, as a memory's tags are read back: the same memory gets the same keywords
    # whichever order its tags were given in.
    for tag in sorted(tags):
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


def memory_keywords(content: str, tags: Iterable[str], min_confidence: float) -> str:
    """The keywords of a memory with text ``content`` and ``tags``: ``generate_keywords`` with
    the names of the entities in the text at ``min_confidence`` or above, exactly as
    enrichment computes them (see the module)."""
    names = [e.name for e in extract_entities(content) if e.confidence >= min_confidence]
    return generate_keywords(content, tags, names)
