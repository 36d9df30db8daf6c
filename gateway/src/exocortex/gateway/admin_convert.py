"""Goal, milestone and entity protobuf messages → REST shapes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from exocortex.gateway import convert
from exocortex.proto.v1 import entities_pb2, goals_pb2


def _time(message: Any, name: str) -> datetime | None:
    if not message.HasField(name):
        return None
    stamp: Timestamp = getattr(message, name)
    return stamp.ToDatetime(tzinfo=UTC)


def stamp(value: datetime) -> Timestamp:
    out = Timestamp()
    out.FromDatetime(value)
    return out


def milestone(m: goals_pb2.Milestone) -> dict[str, Any]:
    return {
        "id": m.id,
        "goal_id": m.goal_id,
        "title": m.title,
        "status": m.status,
        "order": m.order,
        "deadline": _time(m, "deadline"),
        "completed_at": _time(m, "completed_at"),
        "created_at": _time(m, "created_at"),
        "updated_at": _time(m, "updated_at"),
    }


def goal(g: goals_pb2.Goal) -> dict[str, Any]:
    return {
        "id": g.id,
        "namespace": g.namespace,
        "title": g.title,
        "description": g.description if g.HasField("description") else None,
        "status": g.status,
        "priority": g.priority,
        "deadline": _time(g, "deadline"),
        "metadata": json.loads(g.metadata_json or "{}"),
        "completed_at": _time(g, "completed_at"),
        "created_at": _time(g, "created_at"),
        "updated_at": _time(g, "updated_at"),
        "milestones": [milestone(m) for m in g.milestones],
        "progress": [convert.memory(m) for m in g.progress],
        "progress_count": g.progress_count,
    }


def entity(e: entities_pb2.StoredEntity) -> dict[str, Any]:
    return {
        "id": e.id,
        "namespace": e.namespace,
        "name": e.name,
        "type": e.type,
        "aliases": list(e.aliases),
        "tags": list(e.tags),
        "metadata": json.loads(e.metadata_json or "{}"),
        "created_at": _time(e, "created_at"),
        "updated_at": _time(e, "updated_at"),
    }
