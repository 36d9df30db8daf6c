"""gRPC ↔ GoalService conversion only."""

from __future__ import annotations

from collections.abc import Callable

import grpc

from exocortex.core.repositories.goal_protos import goal_to_proto
from exocortex.core.rpc.records import memory_to_proto
from exocortex.core.rpc.timestamps import from_field
from exocortex.ingest.goals.model import GoalChanges, GoalView, MilestoneChanges, ProgressNote
from exocortex.ingest.goals.service import GoalService
from exocortex.ingest.store import validation
from exocortex.proto.v1 import goals_pb2, goals_pb2_grpc


def goal_proto(view: GoalView) -> goals_pb2.Goal:
    return goal_to_proto(
        view.goal,
        view.milestones,
        view.progress_count,
        [memory_to_proto(m) for m in view.progress],
    )


class GoalsServicer(goals_pb2_grpc.GoalsServicer):
    def __init__(self, service: GoalService, notify: Callable[[], None]) -> None:
        self._service = service
        # Wakes the outbox relay once a progress note is committed.
        self._notify = notify

    async def ListGoals(
        self, request: goals_pb2.ListGoalsRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.ListGoalsResponse:
        views = await self._service.list(request.namespace, request.status, request.limit)
        return goals_pb2.ListGoalsResponse(goals=[goal_proto(v) for v in views])

    async def GetGoal(
        self, request: goals_pb2.GetGoalRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        return goal_proto(await self._service.get(request.id, request.progress_limit))

    async def CreateGoal(
        self, request: goals_pb2.CreateGoalRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        view = await self._service.create(
            namespace=request.namespace,
            title=request.title,
            description=request.description if request.HasField("description") else None,
            status=request.status if request.HasField("status") else None,
            priority=request.priority if request.HasField("priority") else None,
            deadline=from_field(request, "deadline"),
            metadata=validation.parse_metadata(request.metadata_json),
        )
        return goal_proto(view)

    async def UpdateGoal(
        self, request: goals_pb2.UpdateGoalRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        changes = GoalChanges(
            title=request.title if request.HasField("title") else None,
            description=request.description if request.HasField("description") else None,
            status=request.status if request.HasField("status") else None,
            priority=request.priority if request.HasField("priority") else None,
            deadline=from_field(request, "deadline"),
            metadata=validation.parse_metadata(request.metadata_json)
            if request.metadata_json
            else None,
            clear=tuple(request.clear),
        )
        return goal_proto(await self._service.update(request.id, changes))

    async def DeleteGoal(
        self, request: goals_pb2.DeleteGoalRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.DeleteGoalResponse:
        await self._service.delete(request.id)
        return goals_pb2.DeleteGoalResponse()

    async def LogProgress(
        self, request: goals_pb2.LogProgressRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.LogProgressResponse:
        stored, view = await self._service.log_progress(
            ProgressNote(
                goal_id=request.goal_id,
                content=request.content,
                tags=tuple(request.tags),
                importance=request.importance if request.HasField("importance") else None,
            )
        )
        self._notify()
        return goals_pb2.LogProgressResponse(
            memory=memory_to_proto(stored.memory),
            goal=goal_proto(view),
            dedup_action=stored.dedup_action,
        )

    async def AddMilestone(
        self, request: goals_pb2.AddMilestoneRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        view = await self._service.add_milestone(
            request.goal_id,
            title=request.title,
            order=request.order if request.HasField("order") else None,
            deadline=from_field(request, "deadline"),
            status=request.status if request.HasField("status") else None,
        )
        return goal_proto(view)

    async def UpdateMilestone(
        self, request: goals_pb2.UpdateMilestoneRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        changes = MilestoneChanges(
            title=request.title if request.HasField("title") else None,
            status=request.status if request.HasField("status") else None,
            order=request.order if request.HasField("order") else None,
            deadline=from_field(request, "deadline"),
            clear=tuple(request.clear),
        )
        view = await self._service.update_milestone(request.goal_id, request.milestone_id, changes)
        return goal_proto(view)

    async def RemoveMilestone(
        self, request: goals_pb2.RemoveMilestoneRequest, context: grpc.aio.ServicerContext
    ) -> goals_pb2.Goal:
        return goal_proto(
            await self._service.remove_milestone(request.goal_id, request.milestone_id)
        )
