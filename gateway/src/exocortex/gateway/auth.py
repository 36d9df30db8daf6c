"""API keys: who may call the REST API, read-only or read-write, in which namespaces.

``EXO_API_KEYS`` is a comma-separated list of entries ``KEY[:MODE[:NAMESPACES]]``:

* ``KEY``: the secret (at least 16 characters; no ``,`` ``:`` or ``|``);
* ``MODE``: ``rw`` (default) or ``ro`` (GET routes plus the read-only POSTs: search,
  context-graph, chat);
* ``NAMESPACES``: ``*`` (default, every namespace) or names joined by ``|``.

Clients send ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``. Keys are required when the
gateway binds a non-loopback address (it refuses to start without them) and optional on
loopback; once any key is configured, every ``/api`` route needs one.

A key scoped to namespaces can never read or write another, in two lines of defence:

* :func:`authorize` checks the request as the route will see it (the body decoded and validated
  by the route's own model, defaults filled in): every namespace it names (or the route's
  default), and the namespace of every memory, goal or entity id it touches (path and query
  parameters and id fields of the body, :data:`MEMORY_ID_FIELDS`): for an object joining two
  memories, both ends. Routes that span every namespace and take no namespace need an
  all-namespaces key.
* It then sets the key's namespaces as the caller's scope (``exocortex.core.scope``), which
  every gRPC call carries: the services check each write and filter each read (search, reads
  by id, links, lineage, entities, goals) by it. A search or list that names no namespace
  means every namespace the key may see.
"""

from __future__ import annotations

import email.message
import hashlib
import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Annotated, Any

import grpc
from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel

from exocortex.core import scope
from exocortex.gateway.backends import Backends
from exocortex.gateway.deps import get_backends
from exocortex.gateway.settings import GatewaySettings
from exocortex.proto.v1 import admin_pb2, maintenance_pb2, maintenance_pb2_grpc

MIN_KEY_CHARS = 16
# POST routes that only read, so read-only keys may call them.
READ_ONLY_POSTS = frozenset({"/api/memories/search", "/api/memories/context-graph", "/api/chat"})
# Routes that name no namespace but are harmless for a scoped key.
SCOPED_KEY_ALLOWED = frozenset(
    {("GET", "/api/settings"), ("GET", "/api/settings/schema"), ("GET", "/api/whoami")}
)
# Every name under which a request carries a memory id (path parameter, query parameter or
# body field), declared once. An object that joins two memories (a link, a contradiction
# resolved with keep_id, a lineage or a consolidation) names each end under one of these, and
# each is looked up: acting on such an object needs access to both ends.
MEMORY_ID_FIELDS = frozenset(
    {
        "memory_id",
        "source_id",
        "target_id",
        "keep_id",
        "memory_a_id",
        "memory_b_id",
        "summary_id",
        "parent_id",
    }
)
MEMORY_ID_LIST_FIELDS = frozenset({"ids", "memory_ids", "source_ids"})


async def _contradiction_ends(backends: Backends, contradiction_id: str) -> list[str]:
    """The two memories a contradiction joins; none when it does not exist. Read without the
    caller's scope, so this check does not lean on the maintenance service's own."""
    stub = maintenance_pb2_grpc.MaintenanceStub(backends.channels["maintenance"])
    unscoped = scope.caller_scope.set(None)
    try:
        reply: maintenance_pb2.JsonReply = await stub.GetContradiction(
            maintenance_pb2.RecordRef(id=contradiction_id),
            timeout=backends.settings.rpc_timeout_seconds,
        )
    except grpc.aio.AioRpcError as err:
        if err.code() == grpc.StatusCode.NOT_FOUND:
            return []  # the route answers 404 itself
        raise
    finally:
        scope.caller_scope.reset(unscoped)
    row = json.loads(reply.json)
    return [str(row["memory_a_id"]), str(row["memory_b_id"])]


# Path parameters naming an object that joins two memories: the object's kind and how to find
# its ends, each of which the key must be allowed to see (else the object is "not found").
JOINING_PATH_PARAMS: dict[str, tuple[str, Callable[[Backends, str], Awaitable[list[str]]]]] = {
    "contradiction_id": ("contradiction", _contradiction_ends)
}

bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description="`Authorization: Bearer <key>` with one of `EXO_API_KEYS`.",
)
api_key_scheme = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    scheme_name="apiKey",
    description="`X-API-Key: <key>` with one of `EXO_API_KEYS`.",
)


class KeyFormatError(ValueError):
    """EXO_API_KEYS could not be parsed; the message names the entry (never the secret)."""


@dataclass(frozen=True)
class Principal:
    """Who is calling. ``namespaces`` is None for every namespace."""

    name: str
    can_write: bool = True
    namespaces: frozenset[str] | None = None

    def allows(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


ANONYMOUS = Principal(name="anonymous")


def _digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


@dataclass(frozen=True)
class KeyRing:
    entries: tuple[tuple[bytes, Principal], ...] = ()

    @property
    def enabled(self) -> bool:
        return bool(self.entries)

    def find(self, secret: str) -> Principal | None:
        wanted = _digest(secret)
        found: Principal | None = None
        # Compare against every key in constant time, so timing says nothing about which matched.
        for digest, principal in self.entries:
            if hmac.compare_digest(digest, wanted):
                found = principal
        return found


def parse_keys(raw: str) -> KeyRing:
    entries: list[tuple[bytes, Principal]] = []
    for position, entry in enumerate((e.strip() for e in raw.split(",")), start=1):
        if not entry:
            continue
        parts = entry.split(":")
        if len(parts) > 3:
            raise KeyFormatError(f"EXO_API_KEYS entry {position}: expected KEY[:ro|rw[:NS|NS]]")
        secret = parts[0].strip()
        mode = parts[1].strip() if len(parts) > 1 else "rw"
        scope = parts[2].strip() if len(parts) > 2 else "*"
        if len(secret) < MIN_KEY_CHARS:
            raise KeyFormatError(
                f"EXO_API_KEYS entry {position}: a key needs at least {MIN_KEY_CHARS} characters"
            )
        if mode not in ("ro", "rw"):
            raise KeyFormatError(f"EXO_API_KEYS entry {position}: mode must be 'ro' or 'rw'")
        namespaces: frozenset[str] | None = None
        if scope != "*":
            names = frozenset(n.strip() for n in scope.split("|") if n.strip())
            if not names:
                raise KeyFormatError(f"EXO_API_KEYS entry {position}: list at least one namespace")
            namespaces = names
        # The name is a fingerprint, safe for logs; the secret itself is never kept.
        name = f"key-{hashlib.sha256(secret.encode()).hexdigest()[:8]}"
        entries.append((_digest(secret), Principal(name, mode == "rw", namespaces)))
    return KeyRing(tuple(entries))


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def keyring_for(settings: GatewaySettings) -> KeyRing:
    """Parse the keys and refuse a non-loopback bind without any."""
    ring = parse_keys(settings.api_keys)
    if not ring.enabled and not is_loopback(settings.host):
        raise KeyFormatError(
            f"EXO_API_KEYS is required when the gateway binds {settings.host} (a non-loopback "
            "address); set at least one key, e.g. EXO_API_KEYS=$(openssl rand -hex 24)"
        )
    return ring


def _forbidden(detail: str, field: str = "") -> HTTPException:
    return HTTPException(403, {"detail": detail, "field": field})


def _not_found(kind: str, value: str, field: str) -> HTTPException:
    # The same answer as for an id that does not exist: a scoped key learns nothing.
    return HTTPException(404, {"detail": f"{kind} {value} not found", "field": field})


async def authorize(
    request: Request,
    backends: Annotated[Backends, Depends(get_backends)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
    header_key: Annotated[str | None, Depends(api_key_scheme)],
) -> Principal:
    """The dependency every ``/api`` router is included with."""
    ring: KeyRing = request.app.state.keyring
    principal = ANONYMOUS
    if ring.enabled:
        secret = bearer.credentials if bearer is not None else header_key
        if not secret:
            raise HTTPException(
                401,
                "an API key is required: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'",
                headers={"WWW-Authenticate": "Bearer"},
            )
        found = ring.find(secret)
        if found is None:
            raise HTTPException(
                401, "the API key is not valid", headers={"WWW-Authenticate": "Bearer"}
            )
        principal = found
    request.state.principal = principal
    # Every gRPC call made for this request carries the key's namespaces; the services filter
    # every read and check every write by them (defence in depth behind the checks below).
    if principal.namespaces is not None:
        scope.caller_scope.set(principal.namespaces)
    route = request.scope.get("route")
    path = str(getattr(route, "path", request.url.path))
    method = request.method.upper()
    if not principal.can_write and not _is_read(method, path):
        raise _forbidden("this API key is read-only; use a read-write key to change data")
    if principal.namespaces is not None:
        await _check_scope(request, backends, principal, route, method, path)
    return principal


def _is_read(method: str, path: str) -> bool:
    return method in ("GET", "HEAD", "OPTIONS") or (method == "POST" and path in READ_ONLY_POSTS)


def _declared_namespace(route: Any) -> tuple[bool, str | None]:
    """Whether the route takes a namespace (query or body) and its default (None: all)."""
    dependant = getattr(route, "dependant", None)
    stack = [dependant] if dependant is not None else []
    while stack:
        dep = stack.pop()
        for param in getattr(dep, "query_params", ()):
            if param.name == "namespace":
                return True, _default_of(param.field_info.default)
        for param in getattr(dep, "body_params", ()):
            model = getattr(param.field_info, "annotation", None)
            fields = getattr(model, "model_fields", {})
            if "namespace" in fields:
                return True, _default_of(fields["namespace"].default)
        stack.extend(getattr(dep, "dependencies", ()))
    return False, None


def _default_of(value: Any) -> str | None:
    return value if isinstance(value, str) else None


async def _parsed_body(request: Request, route: Any) -> Any:
    """The request body exactly as the route will receive it: decoded by FastAPI's own rules
    (a JSON media type in any case, ``+json`` suffixes, no content type at all) and validated
    by the route's body model, defaults filled in. None when the route takes no body or the
    body is not valid: the route then answers 4xx without running, so there is nothing to
    authorise. Authorising the validated model rather than the raw bytes means no spelling of
    the request (``null``, a content type in capitals) can be read one way here and another
    way by the route."""
    body_field = getattr(route, "body_field", None)
    if body_field is None:
        return None
    raw = await request.body()  # cached by the framework; this does not consume it
    if not raw:
        return None
    content_type = request.headers.get("content-type")
    if content_type:
        message = email.message.Message()
        message["content-type"] = content_type
        subtype = message.get_content_subtype()
        if message.get_content_maintype() != "application" or not (
            subtype == "json" or subtype.endswith("+json")
        ):
            return None  # not JSON to FastAPI: the body model rejects the raw bytes (422)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    value, errors = body_field.validate(data, {}, loc=("body",))
    return None if errors else value


def _walk(value: Any, found: dict[str, list[Any]]) -> None:
    """Collect namespace and memory id fields from a validated body: its models and the models
    in its lists (free-form dicts such as metadata are user data, not addresses)."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name, None)
            if name == "namespace" or name in MEMORY_ID_FIELDS or name in MEMORY_ID_LIST_FIELDS:
                found.setdefault(name, []).append(item)
            else:
                _walk(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk(item, found)


def _strings(values: Iterable[Any]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


async def _check_scope(
    request: Request,
    backends: Backends,
    principal: Principal,
    route: Any,
    method: str,
    path: str,
) -> None:
    body = await _parsed_body(request, route)
    fields: dict[str, list[Any]] = {}
    _walk(body, fields)
    namespaces = list(request.query_params.getlist("namespace"))
    # A namespace left out (or given as null) means "every namespace this key may see": the
    # services keep to the caller's scope (see exocortex.core.scope), so it needs no check
    # here. A route whose default is a namespace gets it checked like a named one.
    namespaces += [ns for ns in fields.get("namespace", ()) if isinstance(ns, str)]
    declared, default = _declared_namespace(route)
    if (
        declared
        and default is not None
        and "namespace" not in request.query_params
        and not fields.get("namespace")
    ):
        namespaces.append(default)
    for namespace in namespaces:
        if not principal.allows(namespace):
            raise _forbidden(f"this API key may not use namespace {namespace!r}", "namespace")

    memory_ids: list[tuple[str, str]] = []
    goal_ids: list[tuple[str, str]] = []
    entity_ids: list[tuple[str, str]] = []
    kind_by_prefix = (
        ("/api/memories", memory_ids),
        ("/api/goals", goal_ids),
        ("/api/entities", entity_ids),
    )
    # (an end's memory id, the joining object's kind and id): the end itself is never named
    # in the answer, which would tell its id to a key that may not see it.
    ends: list[tuple[str, str, str]] = []
    for name, value in request.path_params.items():
        if name in JOINING_PATH_PARAMS:
            kind, find_ends = JOINING_PATH_PARAMS[name]
            ends.extend((end, kind, value) for end in await find_ends(backends, value))
        if name in MEMORY_ID_FIELDS:
            memory_ids.append((value, name))
        elif name == "goal_id":
            goal_ids.append((value, name))
        elif name == "entity_id":
            entity_ids.append((value, name))
        elif name == "id":
            for prefix, bucket in kind_by_prefix:
                if path.startswith(prefix):
                    bucket.append((value, name))
    for name in sorted(MEMORY_ID_FIELDS):
        memory_ids.extend((v, name) for v in _strings(fields.get(name, ())))
        memory_ids.extend((v, name) for v in request.query_params.getlist(name))
    for name in sorted(MEMORY_ID_LIST_FIELDS):
        for listed in fields.get(name, ()):
            if isinstance(listed, list | tuple):
                memory_ids.extend((v, name) for v in _strings(listed))
    if not (memory_ids or goal_ids or entity_ids or ends):
        if not declared and (method, path) not in SCOPED_KEY_ALLOWED:
            raise _forbidden("this route spans every namespace; it needs a key for all namespaces")
        return
    reply: admin_pb2.ResolveNamespacesResponse = await backends.admin.ResolveNamespaces(
        admin_pb2.ResolveNamespacesRequest(
            memory_ids=[i for i, _ in memory_ids] + [end for end, _, _ in ends],
            goal_ids=[i for i, _ in goal_ids],
            entity_ids=[i for i, _ in entity_ids],
        ),
        timeout=backends.settings.rpc_timeout_seconds,
    )
    for kind, ids, known in (
        ("memory", memory_ids, reply.memories),
        ("goal", goal_ids, reply.goals),
        ("entity", entity_ids, reply.entities),
    ):
        for value, field in ids:
            owner = known.get(value)
            if owner is not None and not principal.allows(owner):
                raise _not_found(kind, value, field)
    for end, kind, object_id in ends:
        owner = reply.memories.get(end)
        if owner is not None and not principal.allows(owner):
            # The same answer as the service gives for a missing one (field "id").
            raise _not_found(kind, object_id, "id")


AuthDep = Annotated[Principal, Depends(authorize)]
