"""Every request parameter or body field that looks like an id is known to the scope check: a
memory id (looked up, so both ends of a link or a contradiction are checked), a goal or entity
id, the id of an object joining two memories, or a name listed here as no address of stored
data. A new id-bearing field added to a route without telling ``auth`` fails this test."""

from __future__ import annotations

from typing import Any

from fastapi.routing import APIRoute
from pydantic import BaseModel

from exocortex.gateway import auth
from exocortex.gateway.app import API_ROUTERS

# Names that end like ids but address nothing a namespace holds: attribution an agent sends,
# a maintenance run, a milestone within a goal that is itself checked.
NOT_STORED_OBJECTS = frozenset(
    {"model_id", "session_id", "conversation_id", "run_id", "milestone_id"}
)
OTHER_OBJECTS = frozenset({"id", "goal_id", "entity_id"})


def _looks_like_id(name: str) -> bool:
    return name in ("id", "ids") or name.endswith(("_id", "_ids"))


def _model_fields(model: Any, seen: set[Any]) -> set[str]:
    """Field names of a body model and of the models nested in it (lists and unions too)."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)) or model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(name)
        stack = [field.annotation]
        while stack:
            annotation = stack.pop()
            names |= _model_fields(annotation, seen)
            stack.extend(getattr(annotation, "__args__", ()))
    return names


def _request_names(route: APIRoute) -> set[str]:
    names: set[str] = set()
    stack = [route.dependant]
    while stack:
        dep = stack.pop()
        names |= {p.name for p in dep.path_params}
        names |= {p.alias for p in dep.query_params}
        for param in dep.body_params:
            annotation = param.field_info.annotation
            for member in (annotation, *getattr(annotation, "__args__", ())):
                names |= _model_fields(member, set())
        stack.extend(dep.dependencies)
    return names


def test_every_id_a_request_can_carry_is_known_to_the_scope_check() -> None:
    known = (
        auth.MEMORY_ID_FIELDS
        | auth.MEMORY_ID_LIST_FIELDS
        | auth.JOINING_PATH_PARAMS.keys()
        | OTHER_OBJECTS
        | NOT_STORED_OBJECTS
    )
    unknown = {
        f"{sorted(route.methods or ())[0]} {route.path}: {name}"
        for router in API_ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for name in _request_names(route)
        if _looks_like_id(name) and name not in known
    }
    assert not unknown, sorted(unknown)


def test_the_routes_with_two_ended_ids_are_seen() -> None:
    """The walk above reaches the fields that matter (else it would pass by seeing nothing)."""
    names = {
        name
        for router in API_ROUTERS
        for route in router.routes
        if isinstance(route, APIRoute)
        for name in _request_names(route)
    }
    assert {"keep_id", "target_id", "contradiction_id", "ids", "memory_id"} <= names
