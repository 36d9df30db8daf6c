"""Questions that ask *when*: the head of the ranking prefers memories that say when (off by
default).

"When did we move the staging database?" is answered by the note that says "moved it last
Friday", not by the three notes that discuss the move at length: the answer is a time, and a
memory that carries none cannot give it. With ``scoring.dated_weight`` > 0, when the query asks
for a time (when, what date, which year, how long ago…), each of the best ``HEAD`` results that
names a time in its text (a date, a year, a month, a weekday, yesterday, last week, ago…) gains
the weight × the best score, and the head is ordered again. The head's scores are handed out
again in the new order, so results stay sorted by score. A regular expression over thirty short
texts: a few tens of microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from exocortex.retrieval.search.results import ScoredMemory

HEAD = 30
DEFAULT_WEIGHT = 0.0

_ASKS_WHEN = re.compile(
    r"\b(when|what (date|day|time|year|month|week)|which (date|day|year|month|week)|how long)\b",
    re.IGNORECASE,
)
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend"
_UNITS = "morning|afternoon|evening|night|day|week|month|year|summer|winter|spring|fall|autumn"
_TIME = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|ago"
    rf"|(last|next|this|past|coming) ({_UNITS}|{_DAYS})|{_DAYS}"
    r"|(19|20)\d\d|\d{1,2}(st|nd|rd|th)|\d{1,2}[/.-]\d{1,2})\b",
    re.IGNORECASE,
)
# Month names with their capital ("may" is mostly the verb; "Mar" and "Dec" stand for months
# only written so).
_MONTH = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November"
    r"|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
)


def weight(s: Mapping[str, str]) -> float:
    try:
        value = float(s.get("scoring.dated_weight", DEFAULT_WEIGHT))
    except ValueError:
        return DEFAULT_WEIGHT
    return min(10.0, value) if value == value and value >= 0 else DEFAULT_WEIGHT


def asks_when(query: str) -> bool:
    return _ASKS_WHEN.search(query) is not None


def names_a_time(text: str) -> bool:
    return _TIME.search(text) is not None or _MONTH.search(text) is not None


def dated_first(query: str, scored: list[ScoredMemory], weight: float) -> list[ScoredMemory]:
    """``scored`` (sorted, best first) with its head ordered again as above; unchanged when the
    weight is 0 or the query does not ask when."""
    if weight <= 0 or len(scored) < 2 or not asks_when(query):
        return scored
    head = scored[:HEAD]
    best = head[0].score
    bonus = {id(s): weight * best if names_a_time(s.memory.content) else 0.0 for s in head}
    # sorted() is stable: ties keep the order so far.
    order = sorted(head, key=lambda s: -(s.score + bonus[id(s)]))
    for item, score in zip(order, [s.score for s in head], strict=True):
        item.score = score
    return order + scored[HEAD:]
