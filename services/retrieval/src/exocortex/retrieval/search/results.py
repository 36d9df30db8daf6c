"""What a search answers: scored memories, their linked context, and the outcome as a whole."""

from __future__ import annotations

from dataclasses import dataclass, field

from exocortex.core.records import MemoryRecord
from exocortex.retrieval.search.fusion import Fused
from exocortex.retrieval.search.graph import NO_EXTRAS, Extras, Link


@dataclass(frozen=True)
class Candidate:
    """A candidate's row and what its signals need beyond it."""

    memory: MemoryRecord
    extras: Extras = NO_EXTRAS


@dataclass
class ScoredMemory:
    memory: MemoryRecord
    score: float
    fused: Fused
    breakdown: dict[str, float] = field(default_factory=dict)
    preview: str = ""


@dataclass
class LinkedMemory:
    memory: MemoryRecord
    link: Link


@dataclass
class SearchOutcome:
    results: list[ScoredMemory]
    degraded: list[str]
    mode: str = "rrf"
    linked: list[LinkedMemory] = field(default_factory=list)
    total: int = 0
    expansion_terms: list[str] = field(default_factory=list)
