"""The reference's rows as this project's version 2 export document, each field mapped on purpose
(docs/migrating.md has the table):

* ids and timestamps are kept (the reference's ``YYYY-MM-DD HH:MM:SS.sss`` is UTC);
* ``parent_id`` means two things there: a chunk's memory (``chunk_index`` set, or in a version 1
  export where ``chunk_index`` is not written, a parent that is not a summary) and the summary a
  consolidated source went into, which here is ``consolidated_into``;
* goal milestones live in the goal's ``metadata.milestones`` there and in ``goal_milestones``
  here; progress notes (memories with ``metadata.goal_id``) also become ``goal_links``;
* every memory is embedded again by the model running here (a chunked memory is found through
  its chunks and gets no vector of its own, as in both products);
* settings go through this project's schema; the reference's defaults, keys this version does
  not have, keys about the reference's own install and the ``ai.*`` keys are reported, not
  applied (``ai.*`` are returned apart, for a caller that asked for them).

Nothing depends on the order of the rows: memories are ordered so that whatever a memory
refers to (its parent, the summary it went into, the version that replaced it) comes first,
and ``memory_levels`` cuts them into groups that can each be sent at once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, get_args

from exocortex.api.limits import (
    ALIASES_MAX,
    ATTRIBUTION_MAX,
    ENTITY_NAME_MAX,
    GOAL_DESCRIPTION_MAX,
    GOAL_TITLE_MAX,
    MILESTONE_ORDER_MAX,
    RESOLUTION_MAX,
    SOURCE_URI_MAX,
    TAG_CHARS_MAX,
    TAGS_MAX,
)
from exocortex.api.vocabulary import (
    ContentType,
    ContradictionStatus,
    EntityType,
    GoalStatus,
    LinkType,
    MilestoneStatus,
    Priority,
    Source,
)
from exocortex.core.domain.keywords import generate_keywords
from exocortex.core.domain.text import content_hash
from exocortex.core.ids import is_ulid
from exocortex.core.reference import values as v
from exocortex.core.reference.model import LeftOut
from exocortex.core.reference.ordering import memory_levels
from exocortex.core.reference.settings import settings_of
from exocortex.core.reference.sources import LOGS, ReferenceData

# Bounds of a restore here for text without a REST bound of its own (maintenance's restore
# checks the same: a memory's content is ingest's default EXO_MAX_CONTENT_CHARS).
CONTENT_MAX = 200_000
CONTEXT_MAX = 20_000
# Marks a memory to embed again: it is no fingerprint of a model running here, so the restore
# computes the vector with the current model (the reference's vectors are not carried).
REEMBED = "reference:embed-again"
SECTION_ORDER = (
    "memories",
    "entities",
    "memory_links",
    "memory_entities",
    "entity_relationships",
    "goals",
    "goal_milestones",
    "goal_links",
    "contradictions",
    "consolidations",
)
GOAL_PROGRESS = "goal-progress"
GOAL_PROGRESS_IMPLICIT = "goal-progress-implicit"


@dataclass
class Conversion:
    document: dict[str, Any]
    left_out: list[LeftOut] = field(default_factory=list)
    # ai.* settings, applied only when the caller asks (they decide where the LLM key goes).
    ai_settings: dict[str, str] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.document.items() if isinstance(v, list | dict) and v}


def to_export(data: ReferenceData, *, namespace: str | None = None) -> Conversion:
    """The version 2 document for ``data``. ``namespace`` puts everything in that namespace;
    without it each row keeps the reference's namespace (``default`` when it has none)."""
    report = v.Report()
    for table, count in data.not_carried.items():
        reason = (
            "a log that starts afresh here (usage counts on each memory do come across)"
            if table in LOGS
            else "a table with no counterpart here"
        )
        report.add(table, reason, count)
    memories, goal_links = _memories(data, namespace, report)
    memory_ids = {m["id"] for m in memories}
    entities = _entities(data, namespace, report)
    entity_ids = {e["id"] for e in entities}
    goals, milestones = _goals(data, namespace, report)
    goal_ids = {g["id"] for g in goals}
    document: dict[str, Any] = {
        "version": 2,
        "exported_at": datetime.now(UTC).isoformat(),
        "namespace": namespace,
        "memories": memories,
        "entities": entities,
        "memory_links": _links(data, memory_ids, report),
        "memory_entities": _memory_entities(data, memory_ids, entity_ids, report),
        "entity_relationships": _relationships(data, memory_ids, entity_ids, report),
        "goals": goals,
        "goal_milestones": milestones,
        "goal_links": [g for g in goal_links if g["goal_id"] in goal_ids],
        "contradictions": _contradictions(data, memory_ids, report),
        "consolidations": _consolidations(data, namespace, memory_ids, report),
    }
    _fill_times(document)
    settings, ai = settings_of(data.settings, report)
    document["settings"] = settings
    return Conversion(document=document, left_out=report.items(), ai_settings=ai)


# Sections whose rows carry an updated_at here (every section carries a created_at).
_UPDATED = ("entities", "goals", "goal_milestones", "contradictions")


def _fill_times(document: dict[str, Any]) -> None:
    """Every row has its times (the columns here are NOT NULL): a row the reference wrote
    without a readable one gets the time of the import."""
    now = datetime.now(UTC).isoformat()
    for section in SECTION_ORDER:
        if section == "memory_entities":
            continue  # no times there, nor here
        for row in document[section]:
            row.setdefault("created_at", now)
            if section in _UPDATED:
                row.setdefault("updated_at", row["created_at"])


# --- memories ------------------------------------------------------------------------------


def _memories(
    data: ReferenceData, namespace: str | None, report: v.Report
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = [r for r in data.rows("memories") if _usable_memory(r, report)]
    by_id = {str(r["id"]): r for r in rows}
    tags: dict[str, list[str]] = defaultdict(list)
    for t in data.rows("memory_tags"):
        tags[str(t.get("memory_id"))].append(str(t.get("tag")))
    consolidated_from: dict[str, str] = {}
    for c in data.rows("consolidations"):
        for source in v.strings(c.get("source_ids")):
            if c.get("summary_id"):
                consolidated_from.setdefault(source, str(c["summary_id"]))

    def is_chunk(row: dict[str, Any]) -> bool:
        if row.get("chunk_index") is not None:
            return True
        parent = by_id.get(str(row.get("parent_id")))
        if parent is None or "chunk_index" in row:
            return False  # a database row without chunk_index is a consolidated source
        return parent.get("content_type") != "summary" and parent.get("source") != "consolidation"

    chunks_of: dict[str, list[dict[str, Any]]] = defaultdict(list)
    out: list[dict[str, Any]] = []
    for row in rows:
        memory_id = str(row["id"])
        parent = row.get("parent_id")
        if parent and is_chunk(row):
            if str(parent) not in by_id:
                report.add(
                    "memories", "a chunk whose memory is missing (the reference drops these)"
                )
                continue
            chunks_of[str(parent)].append(row)
        out.append(_memory(row, namespace, tags.get(memory_id, row.get("tags")), report))
    memories = {m["id"]: m for m in out}
    for parent_id, chunks in chunks_of.items():
        # A version 1 export does not write chunk_index: the chunks' order is their creation's.
        ordered = sorted(
            chunks, key=lambda r: (v.count(r.get("chunk_index")), str(r.get("created_at")), r["id"])
        )
        for index, row in enumerate(ordered):
            chunk = memories[str(row["id"])]
            chunk["parent_id"] = parent_id
            chunk["chunk_index"] = index
            # A chunk belongs to its memory: it has that memory's namespace.
            chunk["namespace"] = memories[parent_id]["namespace"]
        memories[parent_id].pop("embedding_model", None)  # found through its chunks
    for memory_id, memory in memories.items():
        row = by_id[memory_id]
        parent = row.get("parent_id")
        into = None if memory.get("parent_id") else parent or consolidated_from.get(memory_id)
        if into and str(into) in memories and str(into) != memory_id:
            memory["consolidated_into"] = str(into)
        elif into:
            report.add("memories", "a consolidated source whose summary is missing (kept alone)")
        replaced = row.get("superseded_by")
        if replaced and str(replaced) in memories and str(replaced) != memory_id:
            memory["superseded_by"] = str(replaced)
        elif replaced:
            report.add("memories", "a newer version that is missing (kept as the latest)")
    ordered_memories = [m for level in memory_levels(list(memories.values())) for m in level]
    return ordered_memories, _goal_links(ordered_memories)


def _usable_memory(row: dict[str, Any], report: v.Report) -> bool:
    memory_id = row.get("id")
    if not isinstance(memory_id, str) or not is_ulid(memory_id):
        report.add("memories", "an id that is not a ULID (as the reference makes them)")
        return False
    if not isinstance(row.get("content"), str) or not row["content"].strip():
        report.add("memories", "empty content")
        return False
    if len(row["content"]) > CONTENT_MAX:
        report.add("memories", f"content longer than {CONTENT_MAX} characters")
        return False
    return True


def _memory(
    row: dict[str, Any], namespace: str | None, tags: Any, report: v.Report
) -> dict[str, Any]:
    content = str(row["content"]).replace("\x00", "")
    metadata = v.mapping(row.get("metadata"))
    is_metadata = v.flag(row.get("is_metadata"), False)
    if not v.flag(row.get("is_indexed"), True):
        # Kept out of the reference's keyword index (benchmark artifacts): marked as system
        # content here, which search ranks down in the same way.
        is_metadata = True
    content_type = row.get("content_type") or "text"
    if content_type not in get_args(ContentType):
        report.add("memories", f"content_type {content_type!r} unknown here (stored as text)")
        content_type = "text"
    tag_list = [str(t) for t in (tags if isinstance(tags, list) else v.strings(tags))]
    created = v.when(row.get("created_at"))
    if created is None:
        report.add("memories", "no readable created_at (given the time of the import)")
        created = datetime.now(UTC).isoformat()
    memory: dict[str, Any] = {
        "id": str(row["id"]),
        "namespace": v.namespace(row.get("namespace"), namespace, report, "memories"),
        "content": content,
        "content_type": content_type,
        "source": v.choice(row.get("source"), get_args(Source), "import"),
        "source_uri": v.clip(
            row.get("source_uri"), SOURCE_URI_MAX, report, "memories", "source_uri"
        ),
        "importance": v.number(row.get("importance"), 0.5, 0.0, 1.0),
        "valence": v.number(row.get("valence"), 0.0, -1.0, 1.0),
        "is_active": v.flag(row.get("is_active"), True),
        "is_metadata": is_metadata,
        "content_hash": content_hash(content),
        # The reference's own keywords when it made them, else made as a store here makes them.
        "keywords": v.text(row.get("keywords")) or generate_keywords(content, tag_list),
        "embedding_model": REEMBED,
        "useful_count": v.count(row.get("useful_count")),
        "access_count": v.count(row.get("access_count")),
        "last_accessed_at": v.when(row.get("last_accessed_at")),
        "expires_at": v.when(row.get("expires_at")),
        "metadata": metadata,
        # Entities and links come from the reference as it found them.
        "enrichment_status": "done",
        "created_at": created,
        "updated_at": v.when(row.get("updated_at")) or created,
        "version": 1,
        "tags": v.labels(tag_list, report, "memories", most=TAGS_MAX, chars=TAG_CHARS_MAX),
    }
    for name in ("provider", "model_id", "model_name", "agent", "session_id", "conversation_id"):
        memory[name] = v.clip(row.get(name), ATTRIBUTION_MAX, report, "memories", name)
    return {k: v for k, v in memory.items() if v is not None}


def _goal_links(memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Progress notes: the reference ties a memory to a goal by ``metadata.goal_id`` (tagged
    goal-progress when logged, goal-progress-implicit when linked by its matcher)."""
    links = []
    for m in memories:
        goal_id = m.get("metadata", {}).get("goal_id")
        if not isinstance(goal_id, str) or not is_ulid(goal_id) or m.get("parent_id"):
            continue
        implicit = GOAL_PROGRESS_IMPLICIT in m.get("tags", [])
        links.append(
            {
                "goal_id": goal_id,
                "memory_id": m["id"],
                "relevance": 0.7 if implicit else 1.0,
                "kind": "implicit" if implicit else "explicit",
                "created_at": m.get("created_at"),
            }
        )
    return links


# --- the rest ------------------------------------------------------------------------------


def _ulids(row: dict[str, Any], *names: str) -> bool:
    return all(isinstance(row.get(n), str) and is_ulid(row[n]) for n in names)


def _entities(data: ReferenceData, namespace: str | None, report: v.Report) -> list[dict[str, Any]]:
    tags: dict[str, list[str]] = defaultdict(list)
    for t in data.rows("entity_tags"):
        tags[str(t.get("entity_id"))].append(str(t.get("tag")))
    out = []
    for row in data.rows("entities"):
        if not _ulids(row, "id") or not str(row.get("name") or "").strip():
            report.add("entities", "no ULID id or no name")
            continue
        entity_tags = tags.get(row["id"]) or v.strings(row.get("tags")) or row.get("tags") or []
        entity = {
            "id": row["id"],
            "namespace": v.namespace(row.get("namespace"), namespace, report, "entities"),
            "name": str(row["name"]).strip()[:ENTITY_NAME_MAX],
            "type": v.choice(row.get("type"), get_args(EntityType), "concept"),
            "aliases": v.labels(
                v.strings(row.get("aliases")),
                report,
                "entities",
                most=ALIASES_MAX,
                chars=ENTITY_NAME_MAX,
            ),
            "tags": v.labels(
                [str(t) for t in entity_tags],
                report,
                "entities",
                most=TAGS_MAX,
                chars=TAG_CHARS_MAX,
            ),
            "metadata": v.mapping(row.get("metadata")),
            "created_at": v.when(row.get("created_at")),
            "updated_at": v.when(row.get("updated_at")) or v.when(row.get("created_at")),
        }
        out.append({k: v for k, v in entity.items() if v is not None})
    return out


def _links(data: ReferenceData, memory_ids: set[str], report: v.Report) -> list[dict[str, Any]]:
    out = []
    for row in data.rows("memory_links"):
        if row.get("source_id") not in memory_ids or row.get("target_id") not in memory_ids:
            report.add("memory_links", "an end that is not among the memories")
            continue
        link = {
            "source_id": row["source_id"],
            "target_id": row["target_id"],
            "link_type": v.choice(row.get("link_type"), get_args(LinkType), "related"),
            "strength": v.number(row.get("strength"), 0.5, 0.0, 1.0),
            "created_at": v.when(row.get("created_at")),
        }
        out.append({k: v for k, v in link.items() if v is not None})
    return out


def _memory_entities(
    data: ReferenceData, memory_ids: set[str], entity_ids: set[str], report: v.Report
) -> list[dict[str, Any]]:
    out = []
    for row in data.rows("memory_entities"):
        if row.get("memory_id") not in memory_ids or row.get("entity_id") not in entity_ids:
            report.add("memory_entities", "a memory or entity that is not in the source")
            continue
        out.append(
            {
                "memory_id": row["memory_id"],
                "entity_id": row["entity_id"],
                "relevance": v.number(row.get("relevance"), 1.0, 0.0, 1.0),
            }
        )
    return out


def _relationships(
    data: ReferenceData, memory_ids: set[str], entity_ids: set[str], report: v.Report
) -> list[dict[str, Any]]:
    out = []
    for row in data.rows("entity_relationships"):
        ends = (row.get("source_entity_id"), row.get("target_entity_id"))
        if not _ulids(row, "id") or not all(e in entity_ids for e in ends):
            report.add("entity_relationships", "no ULID id, or an entity not in the source")
            continue
        relationship = {
            "id": row["id"],
            "source_entity_id": ends[0],
            "target_entity_id": ends[1],
            "relationship": str(row.get("relationship") or "related")[:200],
            "confidence": v.number(row.get("confidence"), 0.7, 0.0, 1.0),
            "memory_id": row.get("memory_id") if row.get("memory_id") in memory_ids else None,
            "context": v.clip(
                row.get("context"), CONTEXT_MAX, report, "entity_relationships", "context"
            ),
            "created_at": v.when(row.get("created_at")),
        }
        out.append({k: v for k, v in relationship.items() if v is not None})
    return out


def _goals(
    data: ReferenceData, namespace: str | None, report: v.Report
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    goals: list[dict[str, Any]] = []
    milestones: list[dict[str, Any]] = []
    for row in data.rows("goals"):
        if not _ulids(row, "id") or not str(row.get("title") or "").strip():
            report.add("goals", "no ULID id or no title")
            continue
        metadata = v.mapping(row.get("metadata"))
        listed = metadata.pop("milestones", None)
        deadline = v.when(row.get("deadline"))
        if row.get("deadline") and deadline is None:
            # Free text there ("next week"): kept in the goal's metadata, as no date here.
            metadata["reference_deadline"] = str(row["deadline"])
            report.add("goals", "a deadline that is not a date (kept in metadata)")
        created = v.when(row.get("created_at"))
        goal = {
            "id": row["id"],
            "namespace": v.namespace(row.get("namespace"), namespace, report, "goals"),
            "title": str(row["title"]).strip()[:GOAL_TITLE_MAX],
            "description": v.clip(
                row.get("description"), GOAL_DESCRIPTION_MAX, report, "goals", "description"
            ),
            "status": v.choice(row.get("status"), get_args(GoalStatus), "active"),
            "priority": v.choice(row.get("priority"), get_args(Priority), "medium"),
            "deadline": deadline,
            "metadata": metadata,
            "completed_at": v.when(row.get("completed_at")),
            "created_at": created,
            "updated_at": v.when(row.get("updated_at")) or created,
        }
        goals.append({k: v for k, v in goal.items() if v is not None})
        for index, ms in enumerate(listed if isinstance(listed, list) else []):
            if not isinstance(ms, dict) or not _ulids(ms, "id") or not ms.get("title"):
                report.add("goal_milestones", "no ULID id or no title")
                continue
            if ms.get("deadline") and v.when(ms["deadline"]) is None:
                report.add("goal_milestones", "a deadline that is not a date (left out)")
            order = ms.get("order")
            milestone = {
                "id": ms["id"],
                "goal_id": row["id"],
                "title": str(ms["title"]).strip()[:GOAL_TITLE_MAX],
                "status": v.choice(ms.get("status"), get_args(MilestoneStatus), "pending"),
                "sort_order": min(
                    v.count(order if order is not None else index), MILESTONE_ORDER_MAX
                ),
                "deadline": v.when(ms.get("deadline")),
                "completed_at": v.when(ms.get("completed_at")),
                "created_at": created,
                "updated_at": goal["updated_at"],
            }
            milestones.append({k: v for k, v in milestone.items() if v is not None})
    return goals, milestones


def _contradictions(
    data: ReferenceData, memory_ids: set[str], report: v.Report
) -> list[dict[str, Any]]:
    out = []
    for row in data.rows("contradictions"):
        ends = (row.get("memory_a_id"), row.get("memory_b_id"))
        if not _ulids(row, "id") or not all(e in memory_ids for e in ends):
            report.add("contradictions", "no ULID id, or a memory not in the source")
            continue
        contradiction = {
            "id": row["id"],
            "memory_a_id": ends[0],
            "memory_b_id": ends[1],
            "description": (
                v.clip(row.get("description"), CONTEXT_MAX, report, "contradictions", "description")
                or ""
            ),
            "status": v.choice(row.get("status"), get_args(ContradictionStatus), "pending"),
            "resolution": v.clip(
                row.get("resolution"), RESOLUTION_MAX, report, "contradictions", "resolution"
            ),
            "created_at": v.when(row.get("created_at")),
            "updated_at": v.when(row.get("updated_at")) or v.when(row.get("created_at")),
        }
        out.append({k: v for k, v in contradiction.items() if v is not None})
    return out


def _consolidations(
    data: ReferenceData, namespace: str | None, memory_ids: set[str], report: v.Report
) -> list[dict[str, Any]]:
    out = []
    for row in data.rows("consolidations"):
        if not _ulids(row, "id"):
            report.add("consolidations", "no ULID id")
            continue
        sources = [s for s in v.strings(row.get("source_ids")) if is_ulid(s)]
        summary = row.get("summary_id") if row.get("summary_id") in memory_ids else None
        consolidation = {
            "id": row["id"],
            "namespace": v.namespace(None, namespace, report, "consolidations"),
            "summary_id": summary,
            "source_ids": sources,
            "strategy": str(row.get("strategy") or "similarity"),
            "memories_merged": v.count(row.get("memories_merged") or len(sources)),
            "created_at": v.when(row.get("created_at")),
        }
        out.append({k: v for k, v in consolidation.items() if v is not None})
    return out
