"""Entity and relationship extraction by heuristics (no model): technologies, organisations,
people, projects and a few domain concepts, each with a confidence and a real type.

Precision over recall: ordinary words that are also technology names ("go", "rust", "spring")
count only when capitalised, people need an attribution cue ("by Ada Lovelace"), projects need a
cue ("working on Atlas"), and everything under ``MIN_CONFIDENCE`` is dropped by callers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from exocortex.core.domain.setting_values import clamped_float
from exocortex.core.domain.vocabulary import (
    AI_CONCEPTS,
    CASE_SENSITIVE_TECHNOLOGIES,
    ORG_SUFFIXES,
    ORGANIZATIONS,
    STOPWORDS,
    TECHNOLOGIES,
)

MIN_CONFIDENCE = 0.5
# The setting that raises (or lowers) that floor.
CONFIDENCE_SETTING = "enrichment.entity_min_confidence"


def min_confidence(settings: Mapping[str, str]) -> float:
    """The confidence an entity needs to count, from the settings (``CONFIDENCE_SETTING``,
    ``MIN_CONFIDENCE`` by default, within [0, 1]). Enrichment keeps the entities above it and
    the write path names them in the keywords, so both read it here."""
    return clamped_float(settings, CONFIDENCE_SETTING, MIN_CONFIDENCE, 0.0, 1.0)


@dataclass(frozen=True, slots=True)
class Entity:
    name: str
    type: str  # person | project | technology | organization | concept
    confidence: float


@dataclass(frozen=True, slots=True)
class Relationship:
    source: str
    target: str
    relationship: str
    context: str | None
    confidence: float = 0.7


_TECH = re.compile(
    r"(?<![\w.])("
    + "|".join(re.escape(t) for t in sorted(TECHNOLOGIES, key=len, reverse=True))
    + r")(?![\w])",
    re.IGNORECASE,
)
_TECH_CASED = re.compile(r"\b(" + "|".join(CASE_SENSITIVE_TECHNOLOGIES) + r")\b")
_ORG_KNOWN = re.compile(r"\b(" + "|".join(re.escape(o) for o in ORGANIZATIONS) + r")\b")
_ORG_SUFFIX = re.compile(
    r"\b((?:[A-Z][A-Za-z0-9&]+\s){1,3}(?:" + "|".join(ORG_SUFFIXES) + r"))\b\.?"
)
_ORG_BLOCK = frozenset({"The", "A", "An", "Our", "My", "This", "That", "Building", "Using"})
# "First [M.] Last"; a surname may carry an apostrophe or a hyphen (O'Brien, Smith-Jones).
_FULL_NAME = r"[A-Z][a-z]+(?:\s[A-Z]\.?)?\s(?:[A-Z]')?[A-Z][a-z]+(?:-[A-Z][a-z]+)?"
# The cue may open a sentence ("Met Carlos Mendes at ..."); the name itself must be capitalised.
_PERSON = re.compile(
    r"\b(?i:by|from|with|author|creator|founder|CEO|CTO|met|told|asked|said|name is|called|"
    r"interviewed|thanks to|pair(?:ed)? with)"
    rf"\s+({_FULL_NAME})\b"
)
# A name followed by what people do: "Zoe Martin from Globex asked ...", "Ada Lovelace said".
_PERSON_BEFORE_CUE = re.compile(
    rf"\b({_FULL_NAME})\s+(?:from|at|said|says|asked|told|suggested|wrote|thinks|mentioned)\b"
)
# The cue may open a sentence ("Shipped Atlas today"); the name itself must be capitalised.
_PROJECT = re.compile(
    r"\b(?i:working on|building|project|launched|shipped|deployed|released|created|developing|"
    r"maintain(?:s|ed)?)"
    r"\s+(?:the\s+|our\s+|my\s+)?([A-Z][\w-]{2,40})"
)
_PROJECT_SUFFIX = re.compile(r"\b([A-Z][\w-]{2,40}) project\b")
_PROJECT_LIST = re.compile(r"\bprojects[:\s]+([A-Z][\w-]{2,40})")
_FILE_EXT = re.compile(r"\.(py|ts|js|md|json|ya?ml|toml|txt)$", re.IGNORECASE)
_CONCEPT = re.compile(
    r"\b(" + "|".join(re.escape(c) for c in sorted(AI_CONCEPTS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def _valid_project(name: str) -> bool:
    lowered = name.lower()
    return (
        lowered not in STOPWORDS
        and lowered not in TECHNOLOGIES
        and not _FILE_EXT.search(name)
        and not lowered.endswith(("-based", "-ready"))
    )


def extract_entities(content: str) -> list[Entity]:
    """Entities mentioned in ``content``, strongest claim per name (case-insensitive)."""
    found: dict[str, Entity] = {}

    def add(name: str, kind: str, confidence: float) -> None:
        key = name.lower()
        current = found.get(key)
        if current is None or confidence > current.confidence:
            found[key] = Entity(name, kind, confidence)

    # Where a technology is named, a shorter name inside it is not a mention of its own
    # ("GitHub Actions" is not the company GitHub, "Spring Boot" not a second "Spring").
    technology_spans: list[tuple[int, int]] = []
    for match in _TECH.finditer(content):
        add(TECHNOLOGIES[match.group(1).lower()], "technology", 0.9)
        technology_spans.append(match.span(1))
    for match in _TECH_CASED.finditer(content):
        start, end = match.span(1)
        if not any(a <= start and end <= b for a, b in technology_spans):
            add(match.group(1), "technology", 0.9)
    for match in _ORG_KNOWN.finditer(content):
        start, end = match.span(1)
        inside = any(a <= start and end <= b for a, b in technology_spans)
        if not inside and match.group(1).lower() not in found:
            add(match.group(1), "organization", 0.85)
    for match in _ORG_SUFFIX.finditer(content):
        name = match.group(1).strip()
        if name.split()[0] not in _ORG_BLOCK:
            add(name, "organization", 0.85)
    for pattern in (_PERSON, _PERSON_BEFORE_CUE):
        for match in pattern.finditer(content):
            name = match.group(1)
            if name.lower() not in found and not any(
                part.lower() in TECHNOLOGIES or part.lower() in STOPWORDS or part in ORG_SUFFIXES
                for part in name.split()
            ):
                add(name, "person", 0.75)
    for pattern in (_PROJECT, _PROJECT_SUFFIX, _PROJECT_LIST):
        for match in pattern.finditer(content):
            name = match.group(1).rstrip(".-")
            if _valid_project(name) and name.lower() not in found:
                add(name, "project", 0.65)
    for match in _CONCEPT.finditer(content):
        add(
            match.group(1).lower() if not match.group(1).isupper() else match.group(1),
            "concept",
            0.8,
        )
    return sorted(found.values(), key=lambda e: (-e.confidence, e.name.lower()))


_RELATION_PATTERNS: tuple[tuple[str, str], ...] = (
    ("uses", r"(?:uses|using|use|built (?:with|on|using)|depends on|relies on)"),
    ("works_at", r"(?:works at|joined|works for)"),
    ("part_of", r"(?:is part of|belongs to)"),
    ("created", r"(?:created|built|authored|developed|wrote)"),
    ("replaces", r"(?:replaces|supersedes|replaced)"),
)
_CONTEXT = r"(?:\s+((?:for|to|in|as|with)\s[^.,;\n]{2,80}))?"


def extract_relationships(content: str, entities: list[Entity]) -> list[Relationship]:
    """Typed edges between the given entities, with the phrase that explains them
    ("X uses Y for real-time event streaming" → uses, context "for real-time event streaming")."""
    if len(entities) < 2:
        return []
    names = sorted((e.name for e in entities), key=len, reverse=True)
    name_alt = "|".join(re.escape(n) for n in names)
    out: dict[tuple[str, str, str], Relationship] = {}
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", content):
        for relationship, verb in _RELATION_PATTERNS:
            pattern = re.compile(
                rf"\b({name_alt})\b[^.!?\n]{{0,40}}?\b{verb}\s+(?:the\s+|a\s+|an\s+)?({name_alt})\b"
                + _CONTEXT,
                re.IGNORECASE,
            )
            for match in pattern.finditer(sentence):
                source = _canonical(match.group(1), names)
                target = _canonical(match.group(2), names)
                if source.lower() == target.lower():
                    continue
                context = match.group(3).strip() if match.group(3) else None
                out.setdefault(
                    (source.lower(), target.lower(), relationship),
                    Relationship(source, target, relationship, context),
                )
    return list(out.values())


def _canonical(text: str, names: list[str]) -> str:
    for name in names:
        if name.lower() == text.lower():
            return name
    return text
