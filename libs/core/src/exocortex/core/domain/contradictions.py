"""Contradiction candidates between two similar memories.

The seed flagged any similar pair where one side merely contained "not" or "removed", or where
both had an "is/use ..." phrase. Here a pair is a candidate only when it makes two claims about
the *same thing*:

* negation: a sentence in one memory and a sentence in the other say nearly the same words
  (content-word Jaccard >= 0.6 after removing negations) and exactly one of them is negated;
* changed value: both state ``<subject> <verb> <value>`` with the same subject and verb family
  but different values (e.g. "the API timeout is 30 seconds" vs "... is 60 seconds").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from exocortex.core.domain.vocabulary import STOPWORDS

_NEGATION = re.compile(
    r"\b(not|never|no longer|don't|doesn't|didn't|won't|can't|cannot|isn't|aren't|wasn't|"
    r"weren't|stopped|no)\b",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z0-9][a-z0-9.+#-]*")
_VERBS = {
    "is": "be", "are": "be", "was": "be", "were": "be",
    "uses": "use", "use": "use", "used": "use",
    "prefers": "prefer", "prefer": "prefer", "preferred": "prefer",
    "runs on": "run", "run on": "run", "runs": "run",
    "costs": "cost", "cost": "cost",
    "switched to": "use", "moved to": "use", "migrated to": "use", "chose": "use",
}  # fmt: skip
_CLAIM = re.compile(
    r"^(?P<subject>(?:the |our |my )?[a-z0-9][\w .'-]{1,80}?)\s+"
    r"(?P<verb>" + "|".join(sorted(map(re.escape, _VERBS), key=len, reverse=True)) + r")\s+"
    r"(?P<value>(?:now\s+)?[^.,;!?]{1,40})$",
    re.IGNORECASE,
)
NEGATION_OVERLAP = 0.6


@dataclass(frozen=True, slots=True)
class Candidate:
    kind: str  # negation | value_change
    description: str
    score: float


def _content_words(text: str) -> set[str]:
    stripped = _NEGATION.sub(" ", text.lower())
    return {w for w in _WORD.findall(stripped) if w not in STOPWORDS}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(text) if len(s.strip()) > 8]


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _claim(sentence: str) -> tuple[str, str, str] | None:
    match = _CLAIM.match(sentence.strip().rstrip(".!?"))
    if match is None or _NEGATION.search(match.group("value")):
        return None
    subject = " ".join(
        w for w in _WORD.findall(match.group("subject").lower()) if w not in STOPWORDS
    )
    value = re.sub(r"^now\s+", "", match.group("value").strip().lower())
    if not subject:
        return None
    return subject, _VERBS[match.group("verb").lower()], value


def _refines(a: str, b: str) -> bool:
    """One value only adds words to the other ("Postgres" and "Postgres 16"): a refinement,
    not a change. Compared word by word, so "5 seconds" does not hide inside "15 seconds"."""
    wa, wb = set(_WORD.findall(a)), set(_WORD.findall(b))
    return wa <= wb or wb <= wa


def find_contradiction(
    a: str, b: str, *, negation_overlap: float = NEGATION_OVERLAP
) -> Candidate | None:
    """The strongest contradiction candidate between two texts, or None. A negation pair needs
    at least ``negation_overlap`` (Jaccard) of its content words in common."""
    best: Candidate | None = None
    for sa in _sentences(a):
        for sb in _sentences(b):
            neg_a, neg_b = bool(_NEGATION.search(sa)), bool(_NEGATION.search(sb))
            if neg_a != neg_b:
                overlap = _jaccard(_content_words(sa), _content_words(sb))
                if overlap >= negation_overlap and (best is None or overlap > best.score):
                    best = Candidate(
                        "negation",
                        f'One states the opposite of the other: "{sa[:120]}" vs "{sb[:120]}"',
                        overlap,
                    )
            ca, cb = _claim(sa), _claim(sb)
            if ca and cb and ca[:2] == cb[:2] and ca[2] != cb[2]:
                if _refines(ca[2], cb[2]):
                    continue
                if best is None or best.score < 0.9:
                    best = Candidate(
                        "value_change",
                        f'Changed value for "{ca[0]}": "{ca[2]}" vs "{cb[2]}"',
                        0.9,
                    )
    return best
