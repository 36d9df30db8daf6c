"""Goal and milestone rows → protobuf, shared by the service that writes goals (ingest) and the
reads that assemble them with other sections (retrieval's project snapshot), so both answer the
same shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from exocortex.core.rpc.timestamps import set_times
from exocortex.proto.v1 import common_pb2, goals_pb2

Row = dict[str, Any]
_TIMES = ("deadline", "completed_at", "created_at", "updated_at")


def milestone_to_proto(row: Row) -> goals_pb2.Milestone:
    message = goals_pb2.Milestone(
        id=row["id"],
        goal_id=row["goal_id"],
        title=row["title"],
        status=row["status"],
        order=int(row["sort_order"]),
    )
    set_times(message, row, _TIMES)
    return message


def goal_to_proto(
    row: Row,
    milestones: Sequence[Row],
    progress_count: int,
    progress: Sequence[common_pb2.Memory] = (),
) -> goals_pb2.Goal:
    message = goals_pb2.Goal(
        id=row["id"],
        namespace=row["namespace"],
        title=row["title"],
        status=row["status"],
        priority=row["priority"],
        metadata_json=json.dumps(row.get("metadata") or {}, separators=(",", ":")),
        milestones=[milestone_to_proto(m) for m in milestones],
        progress=list(progress),
        progress_count=progress_count,
    )
    if row.get("description") is not None:
        message.description = row["description"]
    set_times(message, row, _TIMES)
    return message
