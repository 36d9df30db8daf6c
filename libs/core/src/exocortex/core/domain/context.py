"""Contextual vectors: a memory embedded together with the memory stored just before it.

A turn of a conversation or a note of a working session often makes sense only next to the one
before it ("Yes, last Sunday" answers "Did you go to the climbing gym?"). Its own vector knows
nothing of the gym; embedded with the turn before, it does. The enrichment worker stores that
second vector (``memories.context_embedding``), and search adds its similarity to the query to
the memory's own (``scoring.context_weight``, see retrieval's ``search/context``).

The previous memory is the one stored right before in the same namespace and stretch of work:
the same rule as search's arrival neighbours (within ``search.neighbour_max_gap_minutes``, and
from the same session, conversation and source when both carry one).
"""

from __future__ import annotations

# The previous memory's end is what leads into this one; the model reads about 256 word pieces,
# so a long previous memory is cut to its last characters (at a word) and this memory's own
# text always fits after it.
PREVIOUS_CHARS = 400
# Memories longer than this are chunked or long enough to stand on their own: no context.
MAX_CONTENT_CHARS = 1500


def context_text(previous: str, content: str) -> str | None:
    """The text embedded as ``content``'s contextual vector, or None when it gets none."""
    previous = previous.strip()
    content = content.strip()
    if not previous or not content or len(content) > MAX_CONTENT_CHARS:
        return None
    if len(previous) > PREVIOUS_CHARS:
        tail = previous[-PREVIOUS_CHARS:]
        cut = tail.find(" ")
        previous = tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail
    return f"{previous}\n{content}"
