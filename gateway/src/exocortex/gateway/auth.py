"""API keys: who may call the REST API, read-only or read-write, in which namespaces.

``EXO_API_KEYS`` is a comma-separated list of entries ``KEY[:MODE[:NAMESPACES]]``:

* ``KEY``: the secret (at least 16 characters; no ``,`` ``:`` or ``|``);
* ``MODE``: ``rw`` (default) or ``ro`` (GET routes plus the read-only POSTs: search,
  context-graph, chat);
* ``NAMESPACES``: ``*`` (default, every namespace) or names joined by ``|``.

Clients send ``Authorization: Bearer KEY`` or ``X-API-Key: KEY``. Keys are required when the
gateway binds a non-loopback address (it refuses to start without them) and optional on
loopback; once any key is configured, every ``/api`` route needs one.

A key scoped to namespaces can never read or write another: :func:`authorize` checks the
namespace named by the query or body (or the route's default, "default") and the namespace of
every memory, goal or entity id the request touches (path parameters and id fields of the
body). Routes that span every namespace and name none need an all-namespaces key.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from exocortex.gateway.backends import Backends
from exocortex.gateway.deps import get_backends
from exocortex.gateway.settings import GatewaySettings
from exocortex.proto.v1 import admin_pb2

MIN_KEY_CHARS = 16
# POST routes that only read, so read-only keys may call them.
READ_ONLY_POSTS = frozenset({"/api/memories/search", "/api/memories/context-graph", "/api/chat"})
# Routes that name no namespace but are harmless for a scoped key.
SCOPED_KEY_ALLOWED = frozenset({("GET", "/api/settings")})
# Body fields holding memory ids, by route prefix.
_MEMORY_ID_FIELDS = ("memory_id", "source_id", "target_id")
_MEMORY_ID_LIST_FIELDS = ("ids", "memory_ids")

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


async def _json_body(request: Request) -> Any:
    if "json" not in request.headers.get("content-type", ""):
        return None
    raw = await request.body()  # cached by the framework; this does not consume it
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _body_namespaces(body: Any) -> list[str]:
    found: list[str] = []
    if isinstance(body, dict):
        if isinstance(body.get("namespace"), str):
            found.append(body["namespace"])
        for value in body.values():
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, dict):
                        found.append(str(item.get("namespace") or "default"))
    return found


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
    namespaces = list(request.query_params.getlist("namespace"))
    body = await _json_body(request)
    namespaces += _body_namespaces(body)
    declared, default = _declared_namespace(route)
    explicit = "namespace" in request.query_params or (
        isinstance(body, dict) and "namespace" in body
    )
    if declared and not explicit:
        if default is None:
            raise _forbidden(
                "this API key is limited to some namespaces: name one with `namespace`",
                "namespace",
            )
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
    for name, value in request.path_params.items():
        if name == "memory_id":
            memory_ids.append((value, name))
        elif name == "goal_id":
            goal_ids.append((value, name))
        elif name == "entity_id":
            entity_ids.append((value, name))
        elif name == "id":
            for prefix, bucket in kind_by_prefix:
                if path.startswith(prefix):
                    bucket.append((value, name))
    if isinstance(body, dict):
        for name in _MEMORY_ID_FIELDS:
            if isinstance(body.get(name), str):
                memory_ids.append((body[name], name))
        for name in _MEMORY_ID_LIST_FIELDS:
            if isinstance(body.get(name), list):
                memory_ids.extend((v, name) for v in _strings(body[name]))
    if not (memory_ids or goal_ids or entity_ids):
        if not declared and (method, path) not in SCOPED_KEY_ALLOWED:
            raise _forbidden("this route spans every namespace; it needs a key for all namespaces")
        return
    reply: admin_pb2.ResolveNamespacesResponse = await backends.admin.ResolveNamespaces(
        admin_pb2.ResolveNamespacesRequest(
            memory_ids=[i for i, _ in memory_ids],
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


AuthDep = Annotated[Principal, Depends(authorize)]
