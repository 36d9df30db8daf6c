"""Sending a memory brought from the reference product (converted to an export document by
``exocortex.core.reference``) to ``POST /api/memories/import``, several requests in flight.

The document goes in phases: the memories level by level (a level refers only to memories of
the levels before it: a chunk's memory, the summary a source went into, the version that
replaced it), then entities and goals, then everything that refers to them. Within a phase the
parts are independent, so up to ``in_flight`` are sent at once; a phase starts when the one
before it is in. Each part is restored exactly and idempotently by the server, so an
interrupted import is resumed by running it again, and a second run changes nothing.

A dry run is answered per part by the server, in transactions it rolls back: a row whose
reference is new in this same import is reported by the server as missing its reference, so
it is counted here as one that would be created.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from exocortex.core.reference.ordering import memory_levels

HEADER = ("version", "exported_at", "namespace")
INDEPENDENT = ("entities", "goals")
DEPENDENT = (
    "memory_links",
    "memory_entities",
    "entity_relationships",
    "goal_milestones",
    "goal_links",
    "contradictions",
    "consolidations",
)
# The fields of a row that name other rows (a row referring to one new in this import is new).
REFERENCES: dict[str, tuple[str, ...]] = {
    "memories": ("parent_id",),
    "memory_links": ("source_id", "target_id"),
    "memory_entities": ("memory_id", "entity_id"),
    "entity_relationships": ("source_entity_id", "target_entity_id"),
    "goal_milestones": ("goal_id",),
    "goal_links": ("goal_id", "memory_id"),
    "contradictions": ("memory_a_id", "memory_b_id"),
}
# The server lists at most this many items not created per reply (RestoreReport.items): parts
# stay within it, so every item's outcome is known.
PART_MAX = 100
# The server's reason for a row whose id is here already.
ALREADY_HERE = "already present"

Post = Callable[[dict[str, Any]], dict[str, Any]]


@dataclass
class Part:
    document: dict[str, Any]
    items: int


def _key(section: str, item: dict[str, Any]) -> str:
    refs = {
        "memory_links": ("source_id", "target_id"),
        "memory_entities": ("memory_id", "entity_id"),
        "goal_links": ("goal_id", "memory_id"),
    }.get(section)
    if refs:
        return f"{item[refs[0]]}→{item[refs[1]]}"
    return str(item.get("id", ""))


def phases(document: dict[str, Any], size: int, max_bytes: int) -> list[list[Part]]:
    """The document as phases of parts (each part an export document of its own)."""
    header = {k: document.get(k) for k in HEADER}
    out = [
        list(_parts(header, [("memories", level)], size, max_bytes))
        for level in memory_levels(document.get("memories", []))
    ]
    groups = (INDEPENDENT, DEPENDENT)
    for group in groups:
        sections = [(s, document.get(s) or []) for s in group]
        out.append(list(_parts(header, sections, size, max_bytes)))
    if document.get("settings"):
        out[-1].append(Part({**header, "memories": [], "settings": document["settings"]}, 1))
    return [phase for phase in out if phase]


def _parts(
    header: dict[str, Any],
    sections: list[tuple[str, list[dict[str, Any]]]],
    size: int,
    max_bytes: int,
) -> Iterator[Part]:
    part: dict[str, Any] = {**header, "memories": []}
    items = weight = 0
    for section, rows in sections:
        for row in rows:
            cost = len(json.dumps(row, ensure_ascii=False).encode()) + 1
            if items and (items >= size or weight + cost > max_bytes):
                yield Part(part, items)
                part, items, weight = {**header, "memories": []}, 0, 0
            part.setdefault(section, []).append(row)
            items += 1
            weight += cost
    if items:
        yield Part(part, items)


@dataclass
class Tally:
    """Outcomes per kind: created, already here (same id), merged (the same content is here
    under another id), and the rest with their reasons. Parts hold at most ``PART_MAX`` items,
    so the server's reply lists every item it did not create."""

    dry_run: bool
    counts: dict[str, Counter[str]] = field(default_factory=dict)
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Keys created by this import (or that a dry run would create), for rows referring to them.
    new_keys: set[str] = field(default_factory=set)
    # Keys this import could not bring (rows referring to them cannot come either).
    failed_keys: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, part: Part, report: dict[str, Any]) -> None:
        listed = {(i["section"], i["key"]): i for i in report.get("items", [])}
        with self._lock:
            for section, value in part.document.items():
                if section in HEADER or not isinstance(value, list):
                    continue
                for row in value:
                    key = _key(section, row)
                    item = listed.get((section, key))
                    outcome = "created" if item is None else self._outcome(section, row, item)
                    self.counts.setdefault(section, Counter())[outcome] += 1
                    if outcome == "created":
                        self.new_keys.add(key)
            if "settings" in part.document:
                settings = report.get("sections", {}).get("settings", {})
                counts = self.counts.setdefault("settings", Counter())
                if settings.get("created"):
                    counts["created"] += settings["created"]  # the reply lists the others
                for (section, key), item in listed.items():
                    if section == "settings":
                        outcome = item["outcome"]
                        counts["already here" if outcome == "skipped" and not item["reason"]
                               else outcome] += 1  # fmt: skip
                        if item["reason"]:
                            self.reasons[("settings", f"{key}: {item['reason']}")] += 1

    def _outcome(self, section: str, row: dict[str, Any], item: dict[str, Any]) -> str:
        reason: str = item["reason"]
        if self.dry_run and any(row.get(n) in self.new_keys for n in REFERENCES.get(section, ())):
            return "created"  # its reference is new in this import: rolled back, not missing
        refs = [row.get(n) for n in REFERENCES.get(section, ())]
        if reason.startswith(ALREADY_HERE) and not any(r in self.failed_keys for r in refs):
            # Present already (for a row with references: those came across, so the row is
            # the one missing only if it is here).
            return "already here"
        self.failed_keys.add(_key(section, row))  # not here under this id
        if "same content" in reason:
            return "merged"
        self.reasons[(section, reason or item["outcome"])] += 1
        return str(item["outcome"])

    def total(self, outcome: str) -> int:
        return sum(c.get(outcome, 0) for c in self.counts.values())


def send(
    post: Post,
    stages: list[list[Part]],
    tally: Tally,
    *,
    in_flight: int,
    advance: Callable[[int], None],
) -> None:
    """Each phase's parts, up to ``in_flight`` at once; the first failure stops the import
    (what was sent stays, and running the import again resumes it)."""
    pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix="exo-import")
    try:
        for stage in stages:
            futures: dict[Future[dict[str, Any]], Part] = {
                pool.submit(post, part.document): part for part in stage
            }
            pending = set(futures)
            while pending:
                done, pending = wait(pending, return_when=FIRST_EXCEPTION)
                for future in done:
                    error = future.exception()
                    if error is not None:
                        raise error
                    part = futures[future]
                    tally.add(part, future.result())
                    advance(part.items)
    except BaseException:
        # A failure or Ctrl-C: the parts not yet sent are not sent (the requests in flight
        # finish on the server; running the import again resumes it).
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
