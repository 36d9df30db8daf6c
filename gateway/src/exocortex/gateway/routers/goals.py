"""Goals, milestones and progress (served by the ingest service's Goals RPCs)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, status

from exocortex.api.base import Ok
from exocortex.api.goals import (
    Goal,
    GoalCreate,
    GoalList,
    GoalPatch,
    MilestoneCreate,
    MilestonePatch,
    ProgressCreate,
    ProgressLogged,
)
from exocortex.api.limits import GOALS_LIMIT_MAX, ID_MAX, NAMESPACE_MAX, PROGRESS_LIMIT_MAX
from exocortex.gateway import admin_convert, convert
from exocortex.gateway.deps import BackendsDep
from exocortex.proto.v1 import goals_pb2, retrieval_pb2

router = APIRouter(prefix="/api/goals", tags=["goals"])

GoalId = Annotated[str, Path(min_length=1, max_length=ID_MAX, description="Goal id (ULID)")]
MilestoneId = Annotated[
    str, Path(min_length=1, max_length=ID_MAX, description="Milestone id (ULID)")
]


@router.get("", response_model=GoalList)
async def list_goals(
    backends: BackendsDep,
    namespace: Annotated[str, Query(min_length=1, max_length=NAMESPACE_MAX)] = "default",
    goal_status: Annotated[
        Literal["active", "completed", "stalled", "abandoned", "all"],
        Query(alias="status", description="A status, or `all`."),
    ] = "active",
    limit: Annotated[int, Query(ge=1, le=GOALS_LIMIT_MAX)] = 100,
) -> dict[str, Any]:
    """Goals of a namespace, by priority then newest (active ones unless `status` says)."""
    reply: goals_pb2.ListGoalsResponse = await backends.goals.ListGoals(
        goals_pb2.ListGoalsRequest(namespace=namespace, status=goal_status, limit=limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    results = [admin_convert.goal(g) for g in reply.goals]
    return {"results": results, "count": len(results)}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=Goal)
async def create_goal(body: GoalCreate, backends: BackendsDep) -> dict[str, Any]:
    request = goals_pb2.CreateGoalRequest(
        namespace=body.namespace,
        title=body.title,
        status=body.status,
        priority=body.priority,
        metadata_json=json.dumps(body.metadata),
    )
    if body.description is not None:
        request.description = body.description
    if body.deadline is not None:
        request.deadline.CopyFrom(admin_convert.stamp(body.deadline))
    reply = await backends.goals.CreateGoal(request, timeout=backends.settings.rpc_timeout_seconds)
    return admin_convert.goal(reply)


@router.get("/{goal_id}", response_model=Goal)
async def get_goal(
    goal_id: GoalId,
    backends: BackendsDep,
    progress_limit: Annotated[int, Query(ge=1, le=PROGRESS_LIMIT_MAX)] = 10,
) -> dict[str, Any]:
    """A goal with its milestones and its latest progress notes."""
    reply = await backends.goals.GetGoal(
        goals_pb2.GetGoalRequest(id=goal_id, progress_limit=progress_limit),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return admin_convert.goal(reply)


@router.patch("/{goal_id}", response_model=Goal)
async def update_goal(goal_id: GoalId, body: GoalPatch, backends: BackendsDep) -> dict[str, Any]:
    sent = body.model_fields_set
    request = goals_pb2.UpdateGoalRequest(id=goal_id)
    for name in ("title", "status", "priority"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    if "description" in sent:
        if body.description is None:
            request.clear.append("description")
        else:
            request.description = body.description
    if "deadline" in sent:
        if body.deadline is None:
            request.clear.append("deadline")
        else:
            request.deadline.CopyFrom(admin_convert.stamp(body.deadline))
    if body.metadata is not None:
        request.metadata_json = json.dumps(body.metadata)
    reply = await backends.goals.UpdateGoal(request, timeout=backends.settings.rpc_timeout_seconds)
    return admin_convert.goal(reply)


@router.delete("/{goal_id}", response_model=Ok)
async def delete_goal(goal_id: GoalId, backends: BackendsDep) -> dict[str, Any]:
    """Deletes the goal and its milestones; progress memories stay (only the links go)."""
    await backends.goals.DeleteGoal(
        goals_pb2.DeleteGoalRequest(id=goal_id), timeout=backends.settings.rpc_timeout_seconds
    )
    return {"ok": True}


@router.post(
    "/{goal_id}/progress", status_code=status.HTTP_201_CREATED, response_model=ProgressLogged
)
async def log_progress(
    goal_id: GoalId, body: ProgressCreate, backends: BackendsDep
) -> dict[str, Any]:
    """Stores a `note` memory in the goal's namespace (searchable like any memory) and links it
    to the goal."""
    request = goals_pb2.LogProgressRequest(goal_id=goal_id, content=body.content, tags=body.tags)
    if body.importance is not None:
        request.importance = body.importance
    reply: goals_pb2.LogProgressResponse = await backends.goals.LogProgress(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    indexed = False
    wait_ms = backends.settings.store_wait_ms
    if wait_ms > 0:
        waited = await backends.retrieval.AwaitIndexed(
            retrieval_pb2.AwaitIndexedRequest(
                memory_id=reply.memory.id, version=reply.memory.version, timeout_ms=wait_ms
            ),
            timeout=wait_ms / 1000 + 5,
        )
        indexed = waited.indexed
    memory = convert.memory(reply.memory)
    memory["dedup_action"] = reply.dedup_action
    memory["indexed"] = indexed
    return {"memory": memory, "goal": admin_convert.goal(reply.goal)}


@router.post("/{goal_id}/milestones", status_code=status.HTTP_201_CREATED, response_model=Goal)
async def add_milestone(
    goal_id: GoalId, body: MilestoneCreate, backends: BackendsDep
) -> dict[str, Any]:
    """Adds a milestone (appended unless `order` is given); returns the goal."""
    request = goals_pb2.AddMilestoneRequest(goal_id=goal_id, title=body.title, status=body.status)
    if body.order is not None:
        request.order = body.order
    if body.deadline is not None:
        request.deadline.CopyFrom(admin_convert.stamp(body.deadline))
    reply = await backends.goals.AddMilestone(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return admin_convert.goal(reply)


@router.patch("/{goal_id}/milestones/{milestone_id}", response_model=Goal)
async def update_milestone(
    goal_id: GoalId, milestone_id: MilestoneId, body: MilestonePatch, backends: BackendsDep
) -> dict[str, Any]:
    """Completing sets `completed_at`; moving back to another status clears it."""
    request = goals_pb2.UpdateMilestoneRequest(goal_id=goal_id, milestone_id=milestone_id)
    for name in ("title", "status", "order"):
        value = getattr(body, name)
        if value is not None:
            setattr(request, name, value)
    if "deadline" in body.model_fields_set:
        if body.deadline is None:
            request.clear.append("deadline")
        else:
            request.deadline.CopyFrom(admin_convert.stamp(body.deadline))
    reply = await backends.goals.UpdateMilestone(
        request, timeout=backends.settings.rpc_timeout_seconds
    )
    return admin_convert.goal(reply)


@router.delete("/{goal_id}/milestones/{milestone_id}", response_model=Goal)
async def remove_milestone(
    goal_id: GoalId, milestone_id: MilestoneId, backends: BackendsDep
) -> dict[str, Any]:
    """Removes a milestone; returns the goal."""
    reply = await backends.goals.RemoveMilestone(
        goals_pb2.RemoveMilestoneRequest(goal_id=goal_id, milestone_id=milestone_id),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    return admin_convert.goal(reply)
